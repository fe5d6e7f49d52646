"""The private directory `assertscope run` injects the guard from lives as long as any
process of the job: a job left running by a `run` that was killed, or processes the job
left behind when it ended, still start their Python processes with the guard; the
directory goes once nothing uses it."""

import os
import signal
import subprocess
import sys
import textwrap
import time

from conftest import assertscope_binary

PY = sys.executable
# What a later Python process of the job reports: did it load the guard's start-up hook?
PROBE = "import sys; print('hook' if 'assertscope._inject.sitecustomize' in sys.modules else 'no hook', flush=True)"


def run_cmd(*args):
    return [assertscope_binary(), "run", "--", *args]


def private_dirs(base):
    return sorted(p.name for p in base.iterdir() if p.name.startswith("assertscope-"))


def wait_for(path, text, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text():
            return True
        time.sleep(0.05)
    return False


def test_a_killed_runs_directory_stays_while_its_orphaned_job_runs(tmp_path):
    base = tmp_path / "tmp"
    base.mkdir()
    env = {**os.environ, "ASSERTSCOPE_TMPDIR": str(base)}
    out = tmp_path / "out"
    job = f"echo ready; sleep 2; {PY} -c \"{PROBE}\"; echo done"
    with open(out, "wb") as f:
        proc = subprocess.Popen(run_cmd("bash", "-c", job), stdout=f, stderr=subprocess.DEVNULL, env=env,
                                start_new_session=True)
    assert wait_for(out, "ready")
    proc.kill()  # SIGKILL: run can neither stop its job nor tidy up
    proc.wait()
    # Another run starts meanwhile and tidies up after killed runs.
    subprocess.run(run_cmd("true"), env=env, check=True, timeout=60)
    assert wait_for(out, "done")
    assert out.read_text().split("\n")[1] == "hook", out.read_text()
    # The orphan has ended: the next run removes what it used.
    time.sleep(0.2)
    subprocess.run(run_cmd("true"), env=env, check=True, timeout=60)
    assert private_dirs(base) == []


def test_processes_the_job_left_behind_keep_the_guard_after_run_ends(tmp_path):
    # The job starts a detached shell through subprocess (which closes every other
    # descriptor) and ends; the shell starts Python later.
    base = tmp_path / "tmp"
    base.mkdir()
    env = {**os.environ, "ASSERTSCOPE_TMPDIR": str(base)}
    out = tmp_path / "out"
    code = textwrap.dedent(f"""
        import subprocess, sys
        subprocess.Popen(["bash", "-c", "sleep 2; {PY} -c \\"{PROBE}\\"; echo done"], start_new_session=True)
        print("started", flush=True)
        """)
    with open(out, "wb") as f:
        subprocess.run(run_cmd(PY, "-c", code), stdout=f, stderr=subprocess.DEVNULL, env=env, check=True,
                       timeout=60)
    assert "started" in out.read_text()
    subprocess.run(run_cmd("true"), env=env, check=True, timeout=60)
    assert wait_for(out, "done")
    assert out.read_text().split("\n")[1] == "hook", out.read_text()
    time.sleep(0.2)
    subprocess.run(run_cmd("true"), env=env, check=True, timeout=60)
    assert private_dirs(base) == []


def test_a_finished_job_leaves_nothing_behind(tmp_path):
    base = tmp_path / "tmp"
    base.mkdir()
    env = {**os.environ, "ASSERTSCOPE_TMPDIR": str(base)}
    subprocess.run(run_cmd(PY, "-c", "import os; os.fork() or print('x')"), env=env, check=True, timeout=60,
                   stdout=subprocess.DEVNULL)
    assert private_dirs(base) == []


def test_a_run_killed_while_its_job_is_gone_too_is_tidied_up(tmp_path):
    base = tmp_path / "tmp"
    base.mkdir()
    env = {**os.environ, "ASSERTSCOPE_TMPDIR": str(base)}
    proc = subprocess.Popen(run_cmd(PY, "-c", "print('ready', flush=True); import time; time.sleep(60)"),
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    assert proc.stdout.readline() == b"ready\n"
    job = [int(p) for t in os.listdir(f"/proc/{proc.pid}/task")
           for p in open(f"/proc/{proc.pid}/task/{t}/children").read().split()]
    proc.kill()
    proc.wait()
    for pid in job:
        os.killpg(pid, signal.SIGKILL)
    time.sleep(0.2)
    assert private_dirs(base)
    subprocess.run(run_cmd("true"), env=env, check=True, timeout=60)
    assert private_dirs(base) == []
