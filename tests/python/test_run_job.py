"""`assertscope run` and the job's processes: the output stays open for every process that
holds it (as a shell pipeline's reader does), signals reach the job's whole process group
exactly once (as with `timeout`, and as a terminal delivers them to a plain job), stops
and the terminal are relayed as a shell's job control expects. Each test compares with the
trusted reference on the same job: the plain shell, `timeout`, an interactive bash."""

import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from conftest import assertscope_binary

PY = sys.executable


def run_cmd(*args):
    return [assertscope_binary(), "run", "--guard", "off", "--", *args]


def as_a_shell_reports(status):
    """A status as `$?` shows it: death by signal N is 128 + N."""
    return 128 - status if status < 0 else status


# -- the output stays open for the processes that hold it ----------------------------------

BACKGROUND = "(for i in 1 2 3 4 5; do echo bg$i; sleep 0.3; done; echo bgdone > note) & echo parent"


def test_background_processes_keep_their_output_as_in_a_pipeline(tmp_path):
    # `bash -c '…' | cat`: the reader sees every line; the background loop writes `note`.
    results = []
    for i, cmd in enumerate([["bash", "-c", BACKGROUND], run_cmd("bash", "-c", BACKGROUND)]):
        cwd = tmp_path / str(i)
        cwd.mkdir()
        proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        results.append((proc.returncode, sorted(proc.stdout.split()), (cwd / "note").exists(), proc.stderr))
    assert results[0] == (0, [b"bg1", b"bg2", b"bg3", b"bg4", b"bg5", b"parent"], True, b"")
    assert results[1] == results[0]


DAEMON = textwrap.dedent("""
    import os, sys, time
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            for i in range(4):
                time.sleep(0.3)
                print("daemon", i, flush=True)
            open("daemon-done", "w").close()
        os._exit(0)
    print("parent", flush=True)
    """)


def test_a_double_forked_daemon_keeps_its_output(tmp_path):
    results = []
    for i, cmd in enumerate([[PY, "-c", DAEMON], run_cmd(PY, "-c", DAEMON)]):
        cwd = tmp_path / str(i)
        cwd.mkdir()
        proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        results.append((proc.returncode, sorted(proc.stdout.splitlines()), (cwd / "daemon-done").exists(),
                        proc.stderr))
    assert results[0][:3] == (0, [b"daemon 0", b"daemon 1", b"daemon 2", b"daemon 3", b"parent"], True)
    assert results[1] == results[0]


def read_until_closed(fd, timeout=30):
    """What a terminal shows until every process has closed it (EIO on the master)."""
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
    return out


def test_on_a_terminal_lines_of_background_processes_are_not_lost(tmp_path):
    results = []
    for i, cmd in enumerate([["bash", "-c", BACKGROUND], run_cmd("bash", "-c", BACKGROUND)]):
        cwd = tmp_path / str(i)
        cwd.mkdir()
        master, slave = pty.openpty()
        proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
        os.close(slave)
        shown = read_until_closed(master)
        os.close(master)
        results.append((proc.wait(timeout=30), sorted(shown.split()), (cwd / "note").exists()))
    assert results[0] == (0, [b"bg1", b"bg2", b"bg3", b"bg4", b"bg5", b"parent"], True)
    assert results[1] == results[0]


def test_a_job_that_closes_its_stdout_early_runs_on_to_its_end(tmp_path):
    code = "import os, sys, time\nos.close(1)\ntime.sleep(1)\nsys.stderr.write('still here\\n')\nsys.exit(3)"
    results = []
    for cmd in ([PY, "-c", code], run_cmd(PY, "-c", code)):
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        results.append((proc.returncode, proc.stdout, proc.stderr.splitlines()[0]))
    assert results[0] == (3, b"", b"still here")
    assert results[1] == results[0]


def test_orphans_left_to_run_are_reaped_not_left_as_zombies(tmp_path):
    # The job's shell exits at once; its `sleep`s become run's to reap.
    proc = subprocess.Popen(run_cmd("sh", "-c", "for i in 1 2 3; do (sleep 0.2; exit $i) & done; echo started"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline() == b"started\n"
    time.sleep(1.5)
    children = children_of(proc.pid)
    states = [open(f"/proc/{c}/stat").read().rsplit(")", 1)[1].split()[0] for c in children if os.path.exists(f"/proc/{c}")]
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert "Z" not in states, states


def children_of(pid):
    children = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            children += [int(p) for p in f.read().split()]
    return children


# -- signals sent to run reach the whole job, once -----------------------------------------

def signal_job(tmp_path):
    (tmp_path / "job.py").write_text(textwrap.dedent("""
        import signal, sys, time
        def got(s, frame):
            open("got", "a").write(f"{s}\\n")
            sys.exit(3)
        for s in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, got)
        print("ready", flush=True)
        time.sleep(30)
        """))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_run_reaches_the_job_behind_a_wrapper_as_with_timeout(tmp_path, sig):
    # `bash -c "python job.py; echo after"`: the signal must reach job.py, not only bash.
    results = []
    for i, tool in enumerate([["timeout", "100"], [assertscope_binary(), "run", "--guard", "off", "--"]]):
        cwd = tmp_path / str(i)
        cwd.mkdir()
        signal_job(cwd)
        proc = subprocess.Popen([*tool, "bash", "-c", f"{PY} job.py; echo after"], cwd=cwd,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout.readline() == b"ready\n"
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=60)
        got = (cwd / "got").read_text() if (cwd / "got").exists() else None
        results.append((got, as_a_shell_reports(proc.returncode)))
    assert results[0] == (f"{int(sig)}\n", 128 + sig)
    assert results[1] == results[0]


def test_sigterm_to_run_also_ends_a_process_that_left_the_jobs_group():
    # `setsid` puts the job's Python in a session of its own, out of reach of a signal to
    # the group; it still holds the output, so run still waits for it, and must end it.
    code = ("import signal, sys, time\n"
            "signal.signal(signal.SIGTERM, lambda s, f: (print('got TERM', flush=True), sys.exit(3)))\n"
            "print('ready', flush=True)\ntime.sleep(30)")
    proc = subprocess.Popen(run_cmd("setsid", PY, "-c", code), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline() == b"ready\n"
    time.sleep(0.2)
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert out == b"got TERM\n"
    assert time.monotonic() - start < 5


def test_a_job_that_ignores_sigterm_is_killed_after_the_grace_period_as_timeout_k_does():
    code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ready', flush=True)\ntime.sleep(60)"
    results = []
    for tool in (["timeout", "-k", "10", "100"], [assertscope_binary(), "run", "--guard", "off", "--"]):
        proc = subprocess.Popen([*tool, PY, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout.readline() == b"ready\n"
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=40)
        results.append((as_a_shell_reports(proc.returncode), 8 < time.monotonic() - start < 30))
    assert results[0] == (128 + signal.SIGKILL, True)
    assert results[1] == results[0]


def test_a_signal_run_ignored_from_the_start_stays_ignored_for_the_job():
    # `nohup run -- job`: a hang-up must not reach the job through run.
    code = "import time\nprint('ready', flush=True)\ntime.sleep(1.5)\nprint('survived', flush=True)"
    results = []
    for cmd in ([PY, "-c", code], run_cmd(PY, "-c", code)):
        proc = subprocess.Popen(["nohup", *cmd], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdout.readline() == b"ready\n"
        proc.send_signal(signal.SIGHUP)
        out, _ = proc.communicate(timeout=30)
        results.append((proc.returncode, out))
    assert results[0] == (0, b"survived\n")
    assert results[1] == results[0]


@pytest.mark.parametrize("sig", [signal.SIGUSR1, signal.SIGINT])
def test_exit_statuses_are_the_shells(sig):
    # A job killed by a signal: run reports 128 + N, as `$?` shows it; for an interrupt
    # that run itself passed on, run dies of it as the job did (as `timeout` does), so that
    # a shell running a loop of jobs stops at Ctrl-C.
    code = "import time\nprint('ready', flush=True)\ntime.sleep(30)"
    results = []
    for cmd in ([PY, "-c", code], run_cmd(PY, "-c", code)):
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdout.readline() == b"ready\n"
        proc.send_signal(sig)
        proc.communicate(timeout=30)
        results.append(as_a_shell_reports(proc.returncode))
    assert results[0] == 128 + sig
    assert results[1] == results[0]


# -- the terminal: an interactive bash, as a user has it -----------------------------------

def interactive_shell():
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe("bash", ["bash", "--norc", "--noprofile", "-i"],
                   {**os.environ, "PS1": "PROMPT$ ", "TERM": "dumb", "PROMPT_COMMAND": ""})
    read_until(fd, b"PROMPT$ ")
    return pid, fd


def read_until(fd, needle, timeout=30):
    out = b""
    deadline = time.monotonic() + timeout
    while needle not in out and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    return out


def end_shell(pid, fd):
    try:
        os.write(fd, b"exit\n")
        time.sleep(0.2)
    except OSError:
        pass
    os.close(fd)
    os.waitpid(pid, 0)


CHECKPOINT_JOB = textwrap.dedent("""
    import sys, time
    def note(s):
        with open(sys.argv[1], "a") as f:
            f.write(s + "\\n")
    try:
        print("ready", flush=True)
        time.sleep(30)
    except KeyboardInterrupt:
        note("interrupted")
        time.sleep(1.5)  # saving a checkpoint: a second Ctrl-C would cut it short
        note("saved")
    """)

needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def plain_and_under_run(line):
    return [line, f"{assertscope_binary()} run --guard off -- {line}"]


@needs_bash
@pytest.mark.parametrize("stdin", ["", "< /dev/null", "| cat"], ids=["terminal", "dev-null", "piped-out"])
def test_ctrl_c_reaches_the_job_once_whatever_stdin_is(tmp_path, stdin):
    (tmp_path / "job.py").write_text(CHECKPOINT_JOB)
    results = []
    for i, line in enumerate(plain_and_under_run(f"{PY} {tmp_path / 'job.py'} {tmp_path}/log{{}} {stdin}")):
        log = tmp_path / f"log{i}"
        pid, fd = interactive_shell()
        os.write(fd, line.replace("{}", str(i)).encode() + b"\n")
        assert b"ready" in read_until(fd, b"ready\r\n")
        time.sleep(0.3)
        os.write(fd, b"\x03")
        read_until(fd, b"PROMPT$ ")
        end_shell(pid, fd)
        results.append(log.read_text().split() if log.exists() else None)
    assert results[0] == ["interrupted", "saved"]
    assert results[1] == results[0]


HANGUP_JOB = textwrap.dedent("""
    import signal, sys, time
    def note(s):
        with open(sys.argv[1], "a") as f:
            f.write(s + "\\n")
    signal.signal(signal.SIGHUP, lambda s, f: note("hangup"))
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    print("ready", flush=True)
    end = time.time() + 3
    while time.time() < end:
        time.sleep(0.05)
    note("end")
    """)


def hangups(log, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not (log.exists() and "end" in log.read_text()):
        time.sleep(0.1)
    return log.read_text().split() if log.exists() else None


@pytest.mark.parametrize("stdin", ["terminal", "dev-null"])
def test_a_shell_hanging_up_its_job_reaches_the_job_once(tmp_path, stdin):
    # Closing a terminal: bash, told by the kernel, sends SIGHUP to each job's process
    # group, of which run is one. Done here as bash does it, with no exit of a session
    # leader after it (whose SIGHUP from the kernel would depend on timing).
    (tmp_path / "job.py").write_text(HANGUP_JOB)
    results = []
    for i, cmd in enumerate([[PY, str(tmp_path / "job.py")], run_cmd(PY, str(tmp_path / "job.py"))]):
        log = tmp_path / f"log{i}"
        master, slave = pty.openpty()
        proc = subprocess.Popen([*cmd, str(log)], stdin=slave if stdin == "terminal" else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, preexec_fn=os.setpgrp)
        assert proc.stdout.readline() == b"ready\n"
        os.killpg(proc.pid, signal.SIGHUP)
        results.append(hangups(log))
        proc.communicate(timeout=30)
        os.close(master)
        os.close(slave)
    assert results[0] == ["hangup", "end"]
    assert results[1] == results[0]


def test_a_terminal_hanging_up_reaches_the_job_once():
    # run leads the terminal's session (`ssh -t host assertscope run …`): closing the
    # terminal hangs up the session's leader, which is run, and run alone.
    results = []
    for i, cmd in enumerate([[PY], run_cmd(PY)]):
        tmp = tempfile.mkdtemp()
        script, log = os.path.join(tmp, "job.py"), Path(tmp) / "log"
        Path(script).write_text(HANGUP_JOB)
        pid, fd = pty.fork()
        if pid == 0:
            os.execvp(cmd[0], [*cmd, script, str(log)])
        assert b"ready" in read_until(fd, b"ready\r\n")
        os.close(fd)
        results.append(hangups(log))
        os.waitpid(pid, 0)
    assert results[0] == ["hangup", "end"]
    assert results[1] == results[0]


@needs_bash
def test_a_signal_to_a_run_in_the_background_reaches_the_job_once(tmp_path):
    (tmp_path / "job.py").write_text(CHECKPOINT_JOB)
    results = []
    for i, line in enumerate(plain_and_under_run(f"{PY} {tmp_path / 'job.py'} {tmp_path}/log{{}}")):
        log = tmp_path / f"log{i}"
        pid, fd = interactive_shell()
        os.write(fd, line.replace("{}", str(i)).encode() + b" &\n")
        assert b"ready" in read_until(fd, b"ready\r\n")
        time.sleep(0.3)
        os.write(fd, b"kill -INT %1; wait\n")
        read_until(fd, b"PROMPT$ ")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not (log.exists() and "saved" in log.read_text()):
            time.sleep(0.1)
        end_shell(pid, fd)
        results.append(log.read_text().split() if log.exists() else None)
    assert results[0] == ["interrupted", "saved"]
    assert results[1] == results[0]


@needs_bash
def test_ctrl_z_stops_the_job_fg_continues_it_and_it_can_read_the_terminal(tmp_path):
    (tmp_path / "job.py").write_text(CHECKPOINT_JOB)
    results = []
    for i, line in enumerate(plain_and_under_run(f"{PY} {tmp_path / 'job.py'} {tmp_path}/log{{}}")):
        pid, fd = interactive_shell()
        os.write(fd, line.replace("{}", str(i)).encode() + b"\n")
        assert b"ready" in read_until(fd, b"ready\r\n")
        time.sleep(0.3)
        os.write(fd, b"\x1a")
        stopped = b"Stopped" in read_until(fd, b"PROMPT$ ", 10)
        os.write(fd, b"fg\n")
        time.sleep(1)
        os.write(fd, b"\x03")
        read_until(fd, b"PROMPT$ ")
        ask = f"{PY} -c \"print('hello', input('name? '))\""
        os.write(fd, (ask if i == 0 else f"{assertscope_binary()} run --guard off -- {ask}").encode() + b"\n")
        read_until(fd, b"name? ", 15)
        os.write(fd, b"bob\n")
        answered = b"hello bob" in read_until(fd, b"PROMPT$ ", 15)
        end_shell(pid, fd)
        log = tmp_path / f"log{i}"
        results.append((stopped, log.read_text().split() if log.exists() else None, answered))
    assert results[0] == (True, ["interrupted", "saved"], True)
    assert results[1] == results[0]
