"""The pre-commit hook as users get it: the hook repository that pre-commit-mirror/ becomes
at each release (ruff-pre-commit's layout: an empty package whose one dependency is the
assertscope wheel of its version), installed by pre-commit itself from a cold cache with
packages from a local wheelhouse only, so nothing is compiled, then run on a sample
repository whose pyproject.toml configures lint."""

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wheelhouse import REPO, offline_pip_env, setuptools_wheel, wheel

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


def cargo_version():
    return re.search(r'^version = "(.*)"$', (REPO / "Cargo.toml").read_text(), re.M).group(1)


def test_the_hook_package_pins_the_assertscope_of_its_version():
    text = (REPO / "pre-commit-mirror" / "pyproject.toml").read_text()
    version = cargo_version()
    assert f'version = "{version}"' in text
    assert f'dependencies = ["assertscope=={version}"]' in text
    assert "--force-exclude" in (REPO / "pre-commit-mirror" / ".pre-commit-hooks.yaml").read_text()


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheelhouse")
    wheel(out)
    setuptools_wheel(out)
    return out


def test_a_cold_hook_installs_the_wheel_and_reads_the_project_configuration(tmp_path, wheelhouse):
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

    def pre_commit():
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "run", "--color", "never"],
            cwd=project, capture_output=True, text=True, env=env, timeout=600,
        )

    started = time.monotonic()
    run = pre_commit()
    cold = time.monotonic() - started
    out = run.stdout + run.stderr
    print(f"cold pre-commit run (install and lint): {cold:.1f} s")
    assert run.returncode == 1, out
    assert "assertscope lint" in out and "Failed" in out, out
    assert "warning[AS111]" in out and "--> train.py:7:34" in out, out
    assert "tests/test_step.py" not in out and "vendor/copied.py" not in out, out
    assert "notes.txt" not in out, out
    assert "Compiling" not in out, out

    (project / "train.py").write_text(FIXED)
    git(project, "add", ".")
    run = pre_commit()
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "assertscope lint" in out and "Passed" in out, out
