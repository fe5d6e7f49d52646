"""Every way a Python process of the job can shut the guard's injection out is named, as
soon as `run` sees it and again when the job has ended; a process that loaded the guard is
never named. `run` notices a Python process that never said it loaded the start-up hook,
whatever the reason, rather than guessing from the command line it was given."""

import os
import stat
import subprocess
import sys

import pytest
from conftest import assertscope_binary

PY = sys.executable
JOB = "import sys, time\ntime.sleep(1.5)\nprint('job done', file=sys.stderr, flush=True)\n"


def run_job(tmp_path, *command, run_args=()):
    (tmp_path / "job.py").write_text(JOB)
    return subprocess.run([assertscope_binary(), "run", *run_args, "--", *command], cwd=tmp_path,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120).stdout.decode()


def shebang_script(tmp_path):
    script = tmp_path / "isolated.py"
    script.write_text(f"#!/usr/bin/env -S {PY} -I\n{JOB}")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


CASES = {
    "-X dev -I": lambda t: [PY, "-X", "dev", "-I", "job.py"],
    "-W ignore -I": lambda t: [PY, "-W", "ignore", "-I", "job.py"],
    "shebang env -S python -I": lambda t: [shebang_script(t)],
    "env -u PYTHONPATH": lambda t: ["env", "-u", "PYTHONPATH", PY, "job.py"],
    "env PYTHONPATH=": lambda t: ["env", "PYTHONPATH=", PY, "job.py"],
    "-S": lambda t: [PY, "-S", "job.py"],
    "-E": lambda t: [PY, "-E", "job.py"],
    "-I inside a shell": lambda t: ["bash", "-c", f"{PY} -I job.py; true"],
    "guard variable removed": lambda t: ["env", "-u", "ASSERTSCOPE_GUARD", PY, "job.py"],
}
REASONS = {
    "-X dev -I": "`-I` (isolated mode)",
    "-W ignore -I": "`-I` (isolated mode)",
    "shebang env -S python -I": "`-I` (isolated mode)",
    "env -u PYTHONPATH": "PYTHONPATH, which the guard is injected through, was removed",
    "env PYTHONPATH=": "PYTHONPATH was replaced",
    "-S": "`-S` makes Python skip `site`",
    "-E": "`-E` makes Python ignore PYTHONPATH",
    "-I inside a shell": "`-I` (isolated mode)",
    "guard variable removed": "ASSERTSCOPE_GUARD is not set",
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_way_of_shutting_the_guard_out_is_named_at_start_and_at_the_end(tmp_path, case):
    output = run_job(tmp_path, *CASES[case](tmp_path))
    lines = output.splitlines()
    notices = [i for i, line in enumerate(lines) if "assertscope: the guard is off in pid" in line]
    done = lines.index("job done")
    assert notices and notices[0] < done, output  # at start, while the job runs
    assert REASONS[case] in lines[notices[0]], output
    summary = [i for i, line in enumerate(lines) if "the guard was off in 1 Python process of this run" in line]
    assert summary and summary[0] > done, output
    assert REASONS[case] in lines[summary[0] + 1], output


def test_a_sitecustomize_of_its_own_first_on_the_path_is_named_at_the_end(tmp_path):
    own = tmp_path / "own"
    own.mkdir()
    (own / "sitecustomize.py").write_text("")
    output = run_job(tmp_path, "bash", "-c", f"PYTHONPATH={own}:$PYTHONPATH {PY} job.py")
    assert "the guard was off in 1 Python process of this run" in output, output
    assert "never loaded the guard's start-up hook" in output, output


@pytest.mark.parametrize("command", [
    [PY, "job.py"],
    ["env", "PYTHONNOUSERSITE=1", PY, "-u", "-X", "dev", "job.py"],
    [PY, "-c", "import multiprocessing as mp, os\nif __name__ == '__main__':\n"
               " p = mp.get_context('fork').Process(target=os.getpid); p.start(); p.join()\n"
               " p = mp.get_context('spawn').Process(target=os.getpid); p.start(); p.join()\n"
               " exec(open('job.py').read())"],
    ["bash", "-c", f"{PY} job.py & {PY} job.py; wait"],
], ids=["plain", "nousersite", "multiprocessing", "two"])
def test_a_guarded_process_is_never_named(tmp_path, command):
    output = run_job(tmp_path, *command)
    assert "job done" in output
    assert "the guard is off" not in output and "the guard was off" not in output, output


def test_with_the_guard_off_nothing_is_named(tmp_path):
    output = run_job(tmp_path, PY, "-I", "job.py", run_args=("--guard", "off"))
    assert "job done" in output
    assert "guard is off" not in output and "guard was off" not in output, output


def test_a_short_python_process_that_is_the_command_is_named(tmp_path):
    output = run_job(tmp_path, PY, "-I", "-c", "pass")
    assert "the guard was off in 1 Python process of this run" in output, output
