"""The start-up hook `assertscope run` injects, tested the way `run` uses it: real Python
subprocesses with PYTHONPATH set to a directory holding the package and a sitecustomize."""

import glob
import json
import os
import shutil
import socket
import subprocess
import sys

import pytest

from conftest import PYTHON_DIR

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "scripts")
PACKAGE = os.path.join(PYTHON_DIR, "assertscope")


def make_injection(root, shim):
    """The directory `run` prepends to PYTHONPATH: the package and a sitecustomize."""
    os.makedirs(root, exist_ok=True)
    shutil.copytree(PACKAGE, os.path.join(root, "assertscope"), ignore=shutil.ignore_patterns("__pycache__"))
    target = os.path.join(root, "sitecustomize.py")
    if shim:
        with open(target, "w") as f:
            f.write("import assertscope._inject.sitecustomize  # noqa: F401\n")
    else:
        shutil.copy(os.path.join(PACKAGE, "_inject", "sitecustomize.py"), target)
    return root


@pytest.fixture(params=["shim", "copy"])
def injected(tmp_path, request):
    return make_injection(str(tmp_path / "inject"), shim=request.param == "shim")


def run(injection, args, tmp_path, extra_env=None, python=sys.executable, pythonpath=(), timeout=240):
    reports = tmp_path / "reports"
    reports.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSERTSCOPE_") and k != "PYTHONPATH"}
    env.update(
        PYTHONPATH=os.pathsep.join([injection, *pythonpath]),
        ASSERTSCOPE_GUARD="1",
        ASSERTSCOPE_GUARD_MODE="auto",
        ASSERTSCOPE_REPORT_DIR=str(reports),
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.update(extra_env or {})
    process = subprocess.run(
        [python, *args], cwd=SCRIPTS, env=env, capture_output=True, text=True, timeout=timeout
    )
    found = []
    for path in sorted(glob.glob(str(reports / "guard-*.json"))):
        with open(path) as f:
            found.append(json.load(f))
    assert not glob.glob(str(reports / ".*.tmp")), "a temporary report file was left behind"
    return process, found


def test_script_bug_is_caught_and_reported(injected, tmp_path):
    process, reports = run(injected, ["bad_labels.py"], tmp_path, {"RANK": "3", "LOCAL_RANK": "1", "WORLD_SIZE": "4"})
    assert process.returncode == 1
    assert "assertscope.GuardError: error[target-out-of-range]: class target out of range in cross_entropy" in process.stderr
    assert "--> bad_labels.py:13:5" in process.stderr and "^ in `<module>`" in process.stderr
    assert "step 0" not in process.stdout
    assert len(reports) == 1
    report = reports[0]
    assert report["schema"] == "assertscope.guard-report/1"
    assert report["host"] == socket.gethostname()
    assert report["pid"] > 0 and isinstance(report["time"], float)
    assert (report["rank"], report["local_rank"], report["world_size"]) == (3, 1, 4)
    assert report["argv"] == ["bad_labels.py"]
    diagnosis = report["diagnosis"]
    assert diagnosis["cause"] == "target-out-of-range"
    assert diagnosis["op"] == "cross_entropy"
    assert diagnosis["rank"] == 3
    assert diagnosis["location"] == {
        "file": "bad_labels.py",
        "line": 13,
        "function": "<module>",
        "code": "loss = criterion(model(x), y)",
    }
    assert diagnosis["values"]["max"] == 4 and diagnosis["values"]["bound"] == 4


def test_slurm_variables_name_the_rank(injected, tmp_path):
    env = {"SLURM_PROCID": "5", "SLURM_LOCALID": "1", "SLURM_NTASKS": "8"}
    _, reports = run(injected, ["bad_labels.py"], tmp_path, env)
    assert (reports[0]["rank"], reports[0]["local_rank"], reports[0]["world_size"]) == (5, 1, 8)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_modes_from_the_environment(injected, tmp_path, mode):
    process, reports = run(injected, ["bad_labels.py"], tmp_path, {"ASSERTSCOPE_GUARD_MODE": mode})
    assert process.returncode == 1
    assert reports[0]["diagnosis"]["location"]["line"] == 13
    assert ("asynchronous guard" in process.stderr) == (mode == "async")


def test_python_dash_m(injected, tmp_path):
    process, reports = run(injected, ["-m", "pkg"], tmp_path)
    assert process.returncode == 1, process.stderr
    assert [r["diagnosis"]["op"] for r in reports] == ["gather"]
    assert reports[0]["diagnosis"]["location"]["file"].endswith(os.path.join("pkg", "__main__.py"))


def test_multiprocessing_spawn_child_is_guarded(injected, tmp_path):
    process, reports = run(injected, ["spawn_child.py"], tmp_path)
    assert process.returncode == 1
    assert "GuardError" in process.stderr
    assert len(reports) == 1
    assert reports[0]["diagnosis"]["cause"] == "embedding-index-out-of-range"
    assert reports[0]["pid"] != process.args  # written by the child


def test_dataloader_worker_is_guarded(injected, tmp_path):
    process, reports = run(injected, ["loader_worker.py"], tmp_path)
    assert process.returncode == 1
    assert "Caught GuardError in DataLoader worker process" in process.stderr
    assert reports and {r["diagnosis"]["op"] for r in reports} == {"one_hot"}


def test_torchrun_rank_with_bad_label(tmp_path):
    injection = make_injection(str(tmp_path / "inject"), shim=True)
    args = ["-m", "torch.distributed.run", "--nproc_per_node=2", "--master_port=0", "--rdzv_backend=c10d",
            "--rdzv_endpoint=localhost:0", "ddp_bad_rank.py"]
    process, reports = run(injection, args, tmp_path, {"OMP_NUM_THREADS": "1"})
    assert process.returncode != 0
    assert [(r["rank"], r["world_size"], r["diagnosis"]["rank"]) for r in reports] == [(1, 2, 1)]
    assert reports[0]["diagnosis"]["location"]["line"] == 15


def test_chains_to_the_users_own_sitecustomize(injected, tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "sitecustomize.py").write_text("import os\nos.environ['THEIR_SITECUSTOMIZE'] = 'ran'\n")
    code = "import os, torch; print(os.environ.get('THEIR_SITECUSTOMIZE'), torch.Tensor.gather.__module__ != None)"
    process, _ = run(injected, ["-c", code], tmp_path, pythonpath=[str(theirs)])
    assert process.returncode == 0, process.stderr
    assert process.stdout.split()[0] == "ran"
    process, _ = run(injected, ["-c", "import assertscope; print(assertscope.is_guarded())"], tmp_path)
    assert process.stdout.strip() == "False"  # torch not imported yet: nothing switched on
    process, _ = run(injected, ["-c", "import torch, assertscope; print(assertscope.is_guarded())"], tmp_path)
    assert process.stdout.strip() == "True"


def test_a_broken_hidden_sitecustomize_does_not_stop_the_program(injected, tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "sitecustomize.py").write_text("raise ValueError('their bug')\n")
    process, _ = run(injected, ["-c", "print('still here')"], tmp_path, pythonpath=[str(theirs)])
    assert process.returncode == 0
    assert process.stdout.strip() == "still here"
    assert "ValueError: their bug" in process.stderr


def _python_without_torch():
    for candidate in ("/usr/bin/python3", shutil.which("python3") or ""):
        if candidate and os.path.exists(candidate):
            probe = subprocess.run([candidate, "-c", "import torch"], capture_output=True)
            version = subprocess.run([candidate, "-c", "import sys; print(sys.version_info >= (3, 9))"], capture_output=True, text=True)
            if probe.returncode != 0 and version.stdout.strip() == "True":
                return candidate
    return None


def test_torch_missing_warns_once_and_lets_the_program_run(injected, tmp_path):
    python = _python_without_torch()
    if python is None:
        pytest.skip("no Python without torch on this machine")
    process, _ = run(injected, ["no_torch.py"], tmp_path, python=python)
    assert process.returncode == 0
    assert process.stdout.strip() == "hello without torch"
    assert process.stderr == ""
    process, _ = run(injected, ["needs_torch.py"], tmp_path, python=python)
    assert process.returncode == 1
    assert process.stderr.count("assertscope: torch is not installed") == 1
    assert "ModuleNotFoundError: No module named 'torch'" in process.stderr


def test_a_failing_guard_warns_once_and_the_program_runs(tmp_path):
    injection = make_injection(str(tmp_path / "inject"), shim=False)
    with open(os.path.join(injection, "assertscope", "_guard", "__init__.py"), "w") as f:
        f.write("raise RuntimeError('broken install')\n")
    process, _ = run(injection, ["bad_labels.py"], tmp_path)
    assert process.stderr.count("assertscope: could not switch the guard on") == 1
    assert "broken install" in process.stderr
    assert "IndexError: Target 4 is out of bounds." in process.stderr  # PyTorch's own error, unguarded


def test_unknown_mode_warns_and_uses_auto(injected, tmp_path):
    process, reports = run(injected, ["bad_labels.py"], tmp_path, {"ASSERTSCOPE_GUARD_MODE": "fast"})
    assert "ASSERTSCOPE_GUARD_MODE='fast' is not auto, sync or async" in process.stderr
    assert reports[0]["diagnosis"]["cause"] == "target-out-of-range"


def test_cpu_mode_runs_a_cuda_script_unmodified(injected, tmp_path):
    plain = subprocess.run([sys.executable, "cuda_train.py"], cwd=SCRIPTS, capture_output=True, text=True)
    assert plain.returncode != 0  # it really needs a GPU (there is none here)
    process, reports = run(injected, ["cuda_train.py"], tmp_path, {"ASSERTSCOPE_CPU": "1"})
    assert process.returncode == 0, process.stderr
    assert "ok True [1.0, 1.0]" in process.stdout
    assert reports == []


def test_cpu_mode_with_the_guard_names_the_bad_label(injected, tmp_path):
    process, reports = run(injected, ["cuda_train.py", "5"], tmp_path, {"ASSERTSCOPE_CPU": "1"})
    assert process.returncode == 1
    assert reports[0]["diagnosis"]["cause"] == "target-out-of-range"
    assert reports[0]["diagnosis"]["location"]["file"] == "cuda_train.py"


def test_cpu_mode_alone(injected, tmp_path):
    process, reports = run(injected, ["cuda_train.py", "5"], tmp_path, {"ASSERTSCOPE_CPU": "1", "ASSERTSCOPE_GUARD": "0"})
    assert process.returncode == 1
    assert "IndexError: Target 4 is out of bounds." in process.stderr
    assert reports == []
