"""The release pipeline as far as this machine runs it: the workflow and `scripts/wheel`
build the Linux wheel the same way, the workflow passes actionlint and zizmor, the crate
compiles for Windows, and (with ASSERTSCOPE_WHEELHOUSE pointing at what `scripts/wheel`
built) the wheel is manylinux2014, small, and works from a fresh virtualenv."""

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from wheelhouse import REPO, offline_pip_env

WORKFLOW = REPO / ".github" / "workflows" / "release.yml"


def workflow():
    return yaml.safe_load(WORKFLOW.read_text())


def pinned(requirement):
    text = (REPO / "scripts" / "wheel-requirements.txt").read_text()
    return re.search(rf"^{requirement}==(\S+)$", text, re.M).group(1)


def test_the_workflow_builds_linux_wheels_as_scripts_wheel_does():
    flow = workflow()
    assert flow["env"]["MATURIN_VERSION"] == "v" + pinned("maturin")
    script = (REPO / "scripts" / "wheel").read_text()
    assert "--profile dist --zig --manylinux" in script
    linux = flow["jobs"]["linux"]
    steps = {s.get("name", s.get("uses", "")): s for s in linux["steps"]}
    build = steps["build the wheel"]
    assert build["uses"].startswith("PyO3/maturin-action@")
    assert build["with"]["args"] == "--profile dist --zig --out dist"
    assert "scripts/wheel-requirements.txt" in steps["install the pinned Zig"]["run"]
    targets = {(m["target"], m["manylinux"]) for m in linux["strategy"]["matrix"]["include"]}
    assert ("x86_64-unknown-linux-gnu", "2014") in targets and ("aarch64-unknown-linux-gnu", "2014") in targets
    assert ("x86_64-unknown-linux-musl", "musllinux_1_2") in targets
    assert "musllinux_1_2" in script and "compatibility=2014" in script
    for job in ("macos", "windows", "sdist"):
        assert flow["jobs"][job]["steps"][-1]["uses"].startswith("actions/upload-artifact@")
    publish = flow["jobs"]["publish"]
    assert publish["permissions"] == {"id-token": "write"}, "trusted publishing, no token"
    assert publish["steps"][-1]["uses"].startswith("pypa/gh-action-pypi-publish@")
    assert set(publish["needs"]) >= {"linux", "macos", "windows", "sdist"}
    # Every action is pinned to a commit.
    for job in flow["jobs"].values():
        for step in job["steps"]:
            if "uses" in step:
                assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), step["uses"]


@pytest.mark.parametrize("tool", ["actionlint", "zizmor"])
def test_the_workflow_passes_the_workflow_linters(tool):
    found = shutil.which(tool) or shutil.which(tool, path=os.path.dirname(sys.executable))
    if not found:
        pytest.skip(f"{tool} is not installed (tests/requirements.txt)")
    args = [found, str(WORKFLOW)] if tool == "actionlint" else [found, "--offline", str(WORKFLOW)]
    run = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_crate_compiles_for_windows():
    try:
        import ziglang  # noqa: F401
    except ImportError:
        pytest.skip("ziglang is not installed (tests/requirements.txt)")
    installed = subprocess.run(["rustup", "target", "list", "--installed"], capture_output=True, text=True)
    if "x86_64-pc-windows-gnu" not in installed.stdout:
        pytest.skip("rustup target add x86_64-pc-windows-gnu (scripts/test adds it)")
    run = subprocess.run(
        [str(REPO / "scripts" / "check-platforms"), "x86_64-pc-windows-gnu"],
        cwd=REPO, capture_output=True, text=True, timeout=1800, env={**os.environ, "ZIG_PYTHON": sys.executable},
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]


@pytest.fixture(scope="module")
def built_wheel():
    given = os.environ.get("ASSERTSCOPE_WHEELHOUSE")
    if not given:
        pytest.skip("set ASSERTSCOPE_WHEELHOUSE to the directory scripts/wheel built into")
    wheels = sorted(Path(given).glob("assertscope-*manylinux*.whl"))
    assert wheels, f"no manylinux wheel in {given}"
    return wheels[-1]


def test_the_wheel_is_manylinux_2_17_one_per_platform_and_small(built_wheel):
    # maturin names both tags: ...-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl
    assert re.search(r"-py3-none-(manylinux2014_x86_64\.)?manylinux_2_17_x86_64\.whl$", built_wheel.name), built_wheel.name
    assert built_wheel.stat().st_size <= 10 * 2**20, built_wheel.stat().st_size
    show = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(built_wheel)], capture_output=True, text=True)
    assert show.returncode == 0, show.stderr
    tag = re.search(r'"manylinux_2_(\d+)_x86_64"', show.stdout)
    assert tag and int(tag.group(1)) <= 17, show.stdout
    names = zipfile.ZipFile(built_wheel).namelist()
    assert any(n.endswith(".data/scripts/assertscope") for n in names), names
    assert "assertscope/_guard/__init__.py" in names or any(n.startswith("assertscope/_guard/") for n in names)


def test_the_wheel_runs_from_a_fresh_virtualenv(built_wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--no-deps", str(built_wheel)],
        check=True, env=offline_pip_env(built_wheel.parent),
    )
    exe = venv / "bin" / "assertscope"
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True, check=True).stdout
    assert version.strip() == "assertscope " + re.search(r'^version = "(.*)"$', (REPO / "Cargo.toml").read_text(), re.M).group(1)
    script = tmp_path / "bad_label.py"
    script.write_text(
        "import torch\nimport torch.nn.functional as F\n"
        "F.cross_entropy(torch.randn(4, 3), torch.tensor([0, 1, 2, 3]))\n"
    )
    # The guard comes from the wheel's own copy of the package; torch from the test's Python.
    run = subprocess.run(
        [str(exe), "run", "--", sys.executable, str(script)], capture_output=True, text=True, timeout=300,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    # run exits with the command's status: the script failed, at the guard's error.
    assert run.returncode == 1, run.stdout + run.stderr
    assert "error[target-out-of-range]" in run.stdout + run.stderr, run.stdout + run.stderr
