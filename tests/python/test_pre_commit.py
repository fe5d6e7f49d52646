"""The pre-commit hook (.pre-commit-hooks.yaml) run by pre-commit itself on a sample
repository, with this checkout as the hook repository: pre-commit clones it, installs
the package into its own environment and runs `assertscope lint` on the staged files."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

DOUBLE_SOFTMAX = """\
import torch.nn as nn
import torch.nn.functional as F


def step(model, x, y):
    probs = F.softmax(model(x), dim=1)
    return nn.CrossEntropyLoss()(probs, y)
"""

FIXED = DOUBLE_SOFTMAX.replace("    probs = F.softmax(model(x), dim=1)\n", "").replace("(probs, y)", "(model(x), y)")


def git(cwd, *args):
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
        env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"},
    ).stdout.strip()


def test_pre_commit_runs_assertscope_lint_on_the_staged_python_files(tmp_path):
    head = git(REPO, "rev-parse", "HEAD")
    if "assertscope-lint" not in git(REPO, "show", f"{head}:.pre-commit-hooks.yaml"):
        pytest.fail(".pre-commit-hooks.yaml of HEAD has no assertscope-lint hook")
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {REPO}\n    rev: {head}\n    hooks:\n      - id: assertscope-lint\n"
    )
    (project / "train.py").write_text(DOUBLE_SOFTMAX)
    (project / "notes.txt").write_text("probs = F.softmax(x)\n")  # not Python: not linted
    git(project, "add", ".")
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        # The hook's binary in the dev profile, in a target directory of its own that
        # later runs reuse (pre-commit builds its clone of HEAD, which must not replace
        # the binary the other tests run): the test checks the hook, not a release build.
        "MATURIN_PEP517_ARGS": "--profile dev",
        "CARGO_TARGET_DIR": str(REPO / "target" / "pre-commit-hook"),
        "NO_COLOR": "1",
    }

    def pre_commit():
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "run", "--color", "never"],
            cwd=project, capture_output=True, text=True, env=env, timeout=900,
        )

    run = pre_commit()
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "assertscope lint" in out and "Failed" in out, out
    assert "warning[AS111]" in out and "--> train.py:7:34" in out, out
    assert "notes.txt" not in out, out

    (project / "train.py").write_text(FIXED)
    git(project, "add", ".")
    run = pre_commit()
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "assertscope lint" in out and "Passed" in out, out
