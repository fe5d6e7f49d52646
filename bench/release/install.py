"""What a new user waits for, from a wheelhouse that `scripts/wheel` built:

1. `pip install` of the assertscope wheel into a fresh virtualenv, against the baseline of
   installing the setuptools wheel (a pure-Python wheel of about 1 MB) into another;
2. a cold pre-commit run of the hook (tests/python/wheelhouse.py sets it up: installs the
   hook repository and the wheel, then lints a sample project), against the baseline of
   creating a virtualenv and installing the wheel by hand.

    .venv/bin/python bench/release/install.py WHEELHOUSE [--runs 3]

Prints each time (median of the runs) and its ratio to the baseline of the same run.
"""

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "python"))
from wheelhouse import hook_project, offline_pip_env, run_pre_commit, setuptools_wheel  # noqa: E402


def timed(fn):
    started = time.monotonic()
    fn()
    return time.monotonic() - started


def venv_install(wheel: Path, scratch: Path):
    venv = scratch / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--no-deps", str(wheel)],
                   check=True, env=offline_pip_env(wheel.parent))


def pip_only(wheel: Path, scratch: Path):
    """The install alone: the virtualenv is made before the clock starts."""
    venv = scratch / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    return timed(lambda: subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", "--no-deps", str(wheel)],
        check=True, env=offline_pip_env(wheel.parent)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("wheelhouse", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    wheel = sorted(args.wheelhouse.glob("assertscope-*.whl"))[-1]
    with tempfile.TemporaryDirectory() as tmp:
        house = Path(tmp) / "house"
        house.mkdir()
        ours = Path(shutil.copy(wheel, house))
        baseline_wheel = setuptools_wheel(house)
        rows = {"pip install assertscope": [], "pip install setuptools (baseline)": [],
                "cold pre-commit hook": [], "venv + pip install assertscope (baseline)": []}
        for run in range(args.runs):
            scratch = Path(tmp) / f"run{run}"
            for slot, (name, fn) in enumerate([
                ("pip install assertscope", lambda d: pip_only(ours, d)),
                ("pip install setuptools (baseline)", lambda d: pip_only(baseline_wheel, d)),
                ("venv + pip install assertscope (baseline)", lambda d: timed(lambda: venv_install(ours, d))),
            ]):
                d = scratch / f"install{slot}"
                d.mkdir(parents=True)
                rows[name].append(fn(d))
            hook_dir = scratch / "hook"
            hook_dir.mkdir(parents=True)
            project, env = hook_project(hook_dir, house)
            started = time.monotonic()
            result = run_pre_commit(project, env)
            rows["cold pre-commit hook"].append(time.monotonic() - started)
            assert result.returncode == 1 and "AS111" in result.stdout, result.stdout + result.stderr
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"wheel: {wheel.name}, {wheel.stat().st_size / 2**20:.1f} MiB; median of {args.runs} runs")
    print(f"pip install assertscope: {med['pip install assertscope']:.1f} s "
          f"({med['pip install assertscope'] / med['pip install setuptools (baseline)']:.2f}x installing setuptools: "
          f"{med['pip install setuptools (baseline)']:.1f} s)")
    print(f"cold pre-commit hook: {med['cold pre-commit hook']:.1f} s "
          f"({med['cold pre-commit hook'] / med['venv + pip install assertscope (baseline)']:.2f}x a venv and the wheel by hand: "
          f"{med['venv + pip install assertscope (baseline)']:.1f} s)")


if __name__ == "__main__":
    main()
