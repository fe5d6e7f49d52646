"""The pre-commit hook as users get it: the hook repository that pre-commit-mirror/ becomes
at each release (ruff-pre-commit's layout: an empty package whose one dependency is the
assertscope wheel of its version), installed by pre-commit itself from a cold cache with
packages from a local wheelhouse only, so nothing is compiled, then run on a sample
repository whose pyproject.toml configures lint."""

import re

import pytest

from wheelhouse import FIXED, REPO, git, hook_project, run_pre_commit, setuptools_wheel, wheel


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
    project, env = hook_project(tmp_path, wheelhouse)
    run = run_pre_commit(project, env)
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "assertscope lint" in out and "Failed" in out, out
    assert "warning[AS111]" in out and "--> train.py:7:34" in out, out
    assert "tests/test_step.py" not in out and "vendor/copied.py" not in out, out
    assert "notes.txt" not in out, out
    assert "Compiling" not in out, out

    (project / "train.py").write_text(FIXED)
    git(project, "add", ".")
    run = run_pre_commit(project, env)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "assertscope lint" in out and "Passed" in out, out
