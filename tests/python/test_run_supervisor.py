"""`assertscope run` as a supervisor: the command must behave as it does without `run`
(broken pipes, write errors, terminals, the order of its output, background processes,
signals, exit statuses), and `run`'s own trouble must never cost the command its status.
Where a trusted reference exists (the shell running the command plainly), the test
compares with it."""

import json
import os
import pty
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import assertscope_binary

REPO = Path(__file__).resolve().parents[2]


def run_cmd(*args):
    return [assertscope_binary(), "run", *args]


def both(command, run_args=("--guard", "off")):
    """The command plainly and under `run`."""
    return [list(command), run_cmd(*run_args, "--", *command)]


def test_a_broken_pipe_reaches_the_child_as_without_run():
    # `yes | head -1`: the consumer leaves, `yes` must die of SIGPIPE at once.
    plain, under_run = both(["yes"])
    statuses = []
    for cmd in (plain, under_run):
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout.readline() == b"y\n"
        proc.stdout.close()
        proc.wait(timeout=20)
        statuses.append(proc.returncode)
        stderr = proc.stderr.read()
        assert stderr == b"", stderr
    # The shell reports a death by SIGPIPE as 128 + 13, as run does.
    assert statuses == [-signal.SIGPIPE, 128 + signal.SIGPIPE]


def test_a_write_error_is_never_hidden():
    code = 'print("x" * 100000)'
    with open("/dev/full", "wb") as full:
        plain = subprocess.run([sys.executable, "-c", code], stdout=full, stderr=subprocess.PIPE)
        under_run = subprocess.run(run_cmd("--guard", "off", "--", sys.executable, "-c", code), stdout=full,
                                   stderr=subprocess.PIPE)
    assert plain.returncode != 0
    assert under_run.returncode != 0
    assert b"No space left on device" in under_run.stderr


def test_a_write_error_after_the_child_succeeded_is_still_a_failure():
    # The child's few bytes fit in the pipe and it exits 0; only run's write fails.
    with open("/dev/full", "wb") as full:
        plain = subprocess.run(["sh", "-c", "echo x"], stdout=full, stderr=subprocess.PIPE)
        under_run = subprocess.run(run_cmd("--guard", "off", "--", "sh", "-c", "echo x"), stdout=full,
                                   stderr=subprocess.PIPE)
    assert plain.returncode != 0
    assert under_run.returncode != 0
    assert b"writing the command's output to stdout failed: No space left on device" in under_run.stderr


def read_all(fd, proc, timeout=30):
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            # Drain what is left after the process ended.
            ready, _, _ = select.select([fd], [], [], 0.2)
            if not ready:
                break
    return out


def in_terminal(cmd, stderr=None):
    """Runs cmd with stdout (and stderr unless given) on a fresh pseudo-terminal, as
    in a user's terminal; returns what the terminal showed and the exit status."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=slave,
                            stderr=stderr if stderr is not None else slave)
    os.close(slave)
    shown = read_all(master, proc)
    proc.wait(timeout=30)
    os.close(master)
    return shown, proc.returncode


def test_only_the_descriptors_on_a_terminal_become_the_pty(tmp_path):
    code = "import os, sys; print('stderr is a tty:', os.isatty(2)); sys.stderr.write('to the file\\n')"
    results = []
    for cmd in both([sys.executable, "-c", code]):
        err_file = tmp_path / f"err{len(results)}.txt"
        with open(err_file, "wb") as err:
            shown, status = in_terminal(cmd, stderr=err)
        results.append((shown, status, err_file.read_bytes()))
    assert results[0] == (b"stderr is a tty: False\r\n", 0, b"to the file\n")
    assert results[1] == results[0]


def test_a_terminal_shows_the_same_bytes_as_without_run():
    # A pty with output processing on top of the user's terminal doubled every \r.
    code = "import sys\nfor i in range(3): print('line', i)\nsys.stderr.write('progress 50%\\rprogress 100%\\n')"
    plain, under_run = (in_terminal(cmd) for cmd in both([sys.executable, "-c", code]))
    assert plain == (b"line 0\r\nline 1\r\nline 2\r\nprogress 50%\rprogress 100%\r\n", 0)
    assert under_run == plain


def test_stdout_and_stderr_to_one_file_keep_their_order(tmp_path):
    code = textwrap.dedent("""
        import sys
        for i in range(3000):
            print("out", i, flush=True)
            print("err", i, file=sys.stderr, flush=True)
        """)
    outputs = []
    for cmd in both([sys.executable, "-c", code]):
        log = tmp_path / f"log{len(outputs)}"
        with open(log, "wb") as f:
            subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, check=True, timeout=120)
        outputs.append(log.read_bytes())
    assert outputs[1] == outputs[0]


def test_a_background_process_writing_only_to_files_does_not_keep_run_waiting(tmp_path):
    # The shell does not wait for `sleep` either: it holds files, not a pipe to a reader.
    results = []
    for cmd in both(["sh", "-c", "sleep 30 & echo x"]):
        out, err = tmp_path / f"out{len(results)}", tmp_path / f"err{len(results)}"
        start = time.monotonic()
        with open(out, "wb") as f, open(err, "wb") as e:
            proc = subprocess.run(cmd, stdout=f, stderr=e, timeout=60)
        results.append((proc.returncode, out.read_bytes(), err.read_bytes(), time.monotonic() - start < 15))
    assert results[0] == (0, b"x\n", b"", True)
    assert results[1] == results[0]


def test_output_written_just_before_the_child_ends_is_kept(tmp_path):
    # Ending promptly must not cost the last bytes: many writes, then an immediate exit.
    code = "import os\nfor i in range(20000): os.write(1, b'%d\\n' % i)\nos._exit(3)"
    proc = subprocess.run(run_cmd("--guard", "off", "--", sys.executable, "-c", code), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120)
    assert proc.returncode == 3
    assert proc.stdout == b"".join(b"%d\n" % i for i in range(20000))


@pytest.mark.parametrize("sig", [signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGTERM, signal.SIGHUP])
def test_signals_sent_to_run_reach_the_child(sig):
    code = textwrap.dedent(f"""
        import signal, sys, time
        def got(s, frame):
            print("child got", s, flush=True)
            sys.exit(7)
        signal.signal({int(sig)}, got)
        print("ready", flush=True)
        time.sleep(60)
        """)
    proc = subprocess.Popen(run_cmd("--guard", "off", "--", sys.executable, "-c", code), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout.readline() == b"ready\n"
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=30)
    assert out == f"child got {int(sig)}\n".encode()
    assert proc.returncode == 7


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGQUIT])
def test_a_kill_sent_to_run_reaches_the_child_while_stdin_is_a_terminal(sig):
    # With stdin on a terminal, Ctrl-C reaches the child through the terminal; a
    # `kill -INT` from another shell reaches only run and must be passed on.
    code = textwrap.dedent(f"""
        import signal, sys, time
        def got(s, frame):
            print("child got", s, flush=True)
            sys.exit(7)
        signal.signal({int(sig)}, got)
        print("ready", flush=True)
        time.sleep(20)
        """)
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(run_cmd("--guard", "off", "--", sys.executable, "-c", code), stdin=slave,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout.readline() == b"ready\n"
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=30)
    finally:
        os.close(slave)
        os.close(master)
    assert out == f"child got {int(sig)}\n".encode()
    assert proc.returncode == 7


def test_a_child_that_cannot_be_guarded_is_named():
    proc = subprocess.run(run_cmd("--", sys.executable, "-I", "-c", "print('hi')"), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout == b"hi\n"
    assert b"`-I` (isolated mode) makes Python ignore PYTHONPATH" in proc.stderr
    assert b"the guard is off in pid" in proc.stderr


def test_env_i_finds_programs_on_the_default_path_as_execvp_does():
    plain = subprocess.run(["env", "-i", "ls", "/"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    under_run = subprocess.run(["env", "-i", assertscope_binary(), "run", "--guard", "off", "--", "ls", "/"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert plain.returncode == 0
    assert (under_run.returncode, under_run.stdout) == (plain.returncode, plain.stdout), under_run.stderr


def test_a_stale_directory_of_a_killed_run_is_removed_by_the_next(tmp_path):
    env = {**os.environ, "ASSERTSCOPE_TMPDIR": str(tmp_path)}
    proc = subprocess.Popen(run_cmd("--", sys.executable, "-c", "print('ready', flush=True); import time; time.sleep(60)"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    assert proc.stdout.readline() == b"ready\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("assertscope-")]
    job = [p for p in children_of(proc.pid)]
    proc.kill()  # SIGKILL: run cannot clean up
    proc.wait()
    for pid in job:  # and its job, in a process group of its own
        os.killpg(pid, signal.SIGKILL)
    time.sleep(0.2)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("assertscope-")], "nothing left to clean"
    subprocess.run(run_cmd("--", "true"), env=env, check=True, timeout=60)
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("assertscope-")]


def children_of(pid):
    """The pids of a process's children (Linux)."""
    children = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            children += [int(p) for p in f.read().split()]
    return children


def test_a_report_path_that_cannot_be_written_is_refused_before_the_job_runs(tmp_path):
    marker = tmp_path / "ran"
    proc = subprocess.run(run_cmd("--report", str(tmp_path / "no-such-dir" / "diag.json"), "--", "touch", str(marker)),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 2
    assert not marker.exists(), "the job ran although its report could not be written"
    lines = proc.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "no-such-dir/diag.json" in lines[0], lines


def test_a_report_dir_that_is_a_file_is_refused_before_the_job_runs(tmp_path):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("mine\n")
    marker = tmp_path / "ran"
    proc = subprocess.run(run_cmd("--report-dir", str(not_a_dir), "--", "touch", str(marker)),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 2
    assert not marker.exists()
    assert not_a_dir.read_text() == "mine\n"
    assert len(proc.stderr.decode().strip().splitlines()) == 1, proc.stderr


def test_a_corrupt_report_does_not_replace_the_childs_status(tmp_path):
    # A report of this very run that cannot be parsed (a process killed mid-write, a
    # full disk): named on stderr, and the command's own status stands.
    code = textwrap.dedent("""
        import os, socket
        d, run = os.environ["ASSERTSCOPE_REPORT_DIR"], os.environ.get("ASSERTSCOPE_RUN_ID", "x")
        open(os.path.join(d, f"guard-{run}-{socket.gethostname()}-{os.getpid()}-1.json"), "w").write('{"schema": "assert')
        """)
    proc = subprocess.run(run_cmd("--report-dir", str(tmp_path), "--", sys.executable, "-c", code),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert b"not a guard report" in proc.stderr


@pytest.mark.parametrize("grace", ["1e300", "nan", "-1", "inf", "soon", ""])
def test_hostile_grace_values_are_refused_without_a_panic(grace):
    proc = subprocess.run(run_cmd(f"--grace={grace}", "--", "true"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.returncode == 2
    assert b"panicked" not in proc.stderr
    assert proc.stderr.startswith(b"error: invalid value") and b"--grace" in proc.stderr


@pytest.mark.parametrize("args", [["doctor", "--json"], ["doctor"], ["rules"], ["rules", "--help"],
                                  ["explain", "examples/logs/star-ratings-gpu.log"]])
def test_a_closed_stdout_ends_every_command_quietly(args):
    proc = subprocess.Popen([assertscope_binary(), *args], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # before the command writes anything
    _, err = proc.communicate(timeout=120)
    assert b"panicked" not in err
    assert err == b"", err
    assert proc.returncode in (0, 1)


def test_run_json_to_a_closed_stdout_keeps_the_childs_status():
    proc = subprocess.Popen(run_cmd("--json", "--", "sh", "-c", "sleep 0.5; exit 4"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert b"panicked" not in err
    assert proc.returncode == 4


BAD_LABEL = "import torch, torch.nn.functional as F\nF.cross_entropy(torch.zeros(4, 3), torch.tensor([0, 1, 2, 3]))\n"


def test_a_single_failing_process_that_is_slow_to_exit_is_not_stopped(tmp_path):
    # The guard reports at once; the process then takes a while to end (saving a
    # checkpoint, flushing logs). No other process is waiting on it: nothing to stop.
    pytest.importorskip("torch")
    script = tmp_path / "slow_to_exit.py"
    script.write_text(BAD_LABEL.replace("F.cross_entropy", "try:\n    F.cross_entropy") +
                      "except RuntimeError:\n    import time; time.sleep(3)\n    raise SystemExit(7)\n")
    proc = subprocess.run(run_cmd("--guard", "sync", "--grace", "0.5", "--", sys.executable, str(script)),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    assert proc.returncode == 7, proc.stderr.decode()[-2000:]
    assert b"stopped after a process failed" not in proc.stderr


def test_a_job_whose_failed_process_exited_is_stopped_after_the_grace_period(tmp_path):
    # A launcher whose worker failed and exited, while the launcher itself waits on
    # (as other ranks blocked in a collective would).
    pytest.importorskip("torch")
    worker = tmp_path / "worker.py"
    worker.write_text(BAD_LABEL)
    launcher = tmp_path / "launcher.py"
    launcher.write_text(f"import subprocess, sys, time\nsubprocess.run([sys.executable, {str(worker)!r}])\n"
                        "print('worker ended', flush=True)\ntime.sleep(120)\n")
    start = time.monotonic()
    proc = subprocess.run(run_cmd("--guard", "sync", "--grace", "1", "--", sys.executable, str(launcher)),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    assert proc.returncode == 128 + signal.SIGTERM
    assert b"worker ended" in proc.stdout
    assert b"stopped after a process failed" in proc.stderr
    assert time.monotonic() - start < 100


def test_a_stale_report_in_a_reused_report_dir_is_not_this_runs(tmp_path):
    pytest.importorskip("torch")
    reports = tmp_path / "reports"
    bad = tmp_path / "bad.py"
    bad.write_text(BAD_LABEL)
    first = subprocess.run(run_cmd("--guard", "sync", "--report-dir", str(reports), "--", sys.executable, str(bad)),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    assert first.returncode == 1
    assert [p for p in reports.iterdir() if p.name.startswith("guard-")], "the first run left no report"
    # A healthy run in the same directory: nothing may be blamed on it, nothing stopped.
    healthy = subprocess.run(run_cmd("--json", "--guard", "sync", "--grace", "0.2", "--report-dir", str(reports), "--",
                                     sys.executable, "-c", "import time; time.sleep(2); print('done')"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    assert healthy.returncode == 0, healthy.stderr.decode()[-2000:]
    assert json.loads(healthy.stdout)["diagnoses"] == []
    assert b"done" in healthy.stderr


def test_relative_directories_survive_the_child_changing_directory(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "tmp").mkdir()
    script = tmp_path / "moves.py"
    script.write_text("import os\nos.chdir('elsewhere')\nimport subprocess, sys\n"
                      f"subprocess.run([sys.executable, '-c', {BAD_LABEL!r}])\n")
    proc = subprocess.run(run_cmd("--guard", "sync", "--report-dir", "reports", "--", sys.executable, str(script)),
                          cwd=tmp_path, env={**os.environ, "ASSERTSCOPE_TMPDIR": "tmp"}, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=300)
    assert b"could not write the guard report" not in proc.stderr
    assert [p.name for p in (tmp_path / "reports").iterdir() if p.name.startswith("guard-")], proc.stderr.decode()[-2000:]
    assert not (tmp_path / "elsewhere" / "reports").exists()


@pytest.mark.parametrize("flags", [["--guard", "sync"], ["--guard", "off"], ["--blocking", "--guard", "off"]])
def test_the_location_is_named_the_same_way_whatever_found_it(flags):
    # The guard names files relative to the working directory; a traceback in the output
    # has Python's absolute paths. The user sees one form either way.
    pytest.importorskip("torch")
    proc = subprocess.run(run_cmd("--json", *flags, "--", sys.executable, "examples/star_ratings.py"), cwd=REPO,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "OMP_NUM_THREADS": "1"},
                          timeout=600)
    report = json.loads(proc.stdout)
    root = report["diagnoses"][0]
    assert root["location"] and root["location"]["file"] == "examples/star_ratings.py", (
        f"{json.dumps(report, indent=1)[:6000]}\n--- the job's output:\n{proc.stderr.decode()[-4000:]}")
