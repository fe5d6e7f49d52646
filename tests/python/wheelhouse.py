"""A local wheelhouse for the tests that install assertscope as users do (the pre-commit
hook, the wheel itself): the wheel of ASSERTSCOPE_WHEELHOUSE when set (what `scripts/wheel`
built), else a wheel of this checkout built by maturin in the dev profile (reusing
target/debug), plus the setuptools wheel that the hook package builds with, taken from
virtualenv's own copy so that nothing is downloaded."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def wheel(out: Path) -> Path:
    given = os.environ.get("ASSERTSCOPE_WHEELHOUSE")
    if given:
        found = sorted(Path(given).glob("assertscope-*.whl"))
        if not found:
            pytest.fail(f"ASSERTSCOPE_WHEELHOUSE={given} holds no assertscope wheel")
        return Path(shutil.copy(found[-1], out))
    try:
        import maturin  # noqa: F401
    except ImportError:
        pytest.skip("maturin is not installed (tests/requirements.txt)")
    subprocess.run(
        [sys.executable, "-m", "maturin", "build", "--profile", "dev", "--out", str(out)],
        cwd=REPO, check=True, capture_output=True, timeout=1800,
    )
    return next(out.glob("assertscope-*.whl"))


def setuptools_wheel(out: Path) -> Path:
    import virtualenv

    embedded = sorted((Path(virtualenv.__file__).parent / "seed" / "wheels" / "embed").glob("setuptools-*.whl"))
    if embedded:
        return Path(shutil.copy(embedded[-1], out))
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(out), "setuptools>=61"], check=True)
    return next(out.glob("setuptools-*.whl"))


def offline_pip_env(wheelhouse: Path) -> dict:
    """pip takes packages from the wheelhouse only."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update({"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse), "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    return env


DOUBLE_SOFTMAX = """\
import torch.nn as nn
import torch.nn.functional as F


def step(model, x, y):
    probs = F.softmax(model(x), dim=1)
    return nn.CrossEntropyLoss()(probs, y)
"""

FIXED = DOUBLE_SOFTMAX.replace("    probs = F.softmax(model(x), dim=1)\n", "").replace("(probs, y)", "(model(x), y)")

CONFIG = """\
[project]
name = "sample"

[tool.assertscope.lint]
extend-exclude = ["vendor"]

[tool.assertscope.lint.per-file-ignores]
"tests/*" = ["AS111"]
"""


def git(cwd, *args):
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
        env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"},
    ).stdout.strip()



def hook_project(tmp_path: Path, wheelhouse: Path):
    """A hook repository made from pre-commit-mirror/, and a sample project using it whose
    pyproject.toml ignores AS111 in tests/ and excludes vendor/; the environment that runs
    pre-commit from a cold cache with the wheelhouse as the only package source."""
    hook = tmp_path / "assertscope-pre-commit"
    shutil.copytree(REPO / "pre-commit-mirror", hook)
    git(hook, "init", "-q")
    git(hook, "add", ".")
    git(hook, "commit", "-q", "-m", "hook")
    rev = git(hook, "rev-parse", "HEAD")
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "vendor").mkdir()
    git(project, "init", "-q")
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hook}\n    rev: {rev}\n    hooks:\n      - id: assertscope-lint\n"
    )
    (project / "pyproject.toml").write_text(CONFIG)
    (project / "train.py").write_text(DOUBLE_SOFTMAX)
    (project / "tests" / "test_step.py").write_text(DOUBLE_SOFTMAX)  # per-file-ignores
    (project / "vendor" / "copied.py").write_text(DOUBLE_SOFTMAX)  # extend-exclude
    (project / "notes.txt").write_text("probs = F.softmax(x)\n")  # not Python: not linted
    git(project, "add", ".")
    env = {**offline_pip_env(wheelhouse), "PRE_COMMIT_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    # No Rust toolchain is reachable: a hook that compiled would fail here.
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not (Path(p) / "cargo").exists())
    env["CARGO"] = env["RUSTC"] = "/nonexistent"
    return project, env


def run_pre_commit(project: Path, env: dict):
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--color", "never"],
        cwd=project, capture_output=True, text=True, env=env, timeout=600,
    )
