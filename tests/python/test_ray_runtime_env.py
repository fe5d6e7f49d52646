"""assertscope.ray's runtime_env, without a cluster: what `run`'s RAY_RUNTIME_ENV_HOOK adds to a
job's runtime_env, how it keeps the user's own, and `python -m assertscope.ray` for
`ray job submit`. (tests/python/test_ray.py runs real jobs on a real cluster.)"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assertscope import _contract
from assertscope import ray as asc_ray

PACKAGE = Path(asc_ray.__file__).parent


def test_it_passes_on_what_run_set_and_tags_the_workers_reports():
    environ = {_contract.GUARD_ENV: "1", _contract.GUARD_MODE_ENV: "sync", _contract.REPORT_DIR_ENV: "/shared/asc",
               _contract.RUN_ID_ENV: "abc123", "PYTHONPATH": "/elsewhere"}
    env = asc_ray.runtime_env(environ=environ)
    assert env["env_vars"] == {_contract.GUARD_ENV: "1", _contract.GUARD_MODE_ENV: "sync",
                               _contract.REPORT_DIR_ENV: "/shared/asc",
                               _contract.RUN_ID_ENV: "abc123" + _contract.RAY_RUN_ID_SUFFIX}
    assert env["py_modules"] == [str(PACKAGE)]
    assert env["worker_process_setup_hook"] == "assertscope.ray.setup_worker"


def test_the_injected_directory_goes_first_on_pythonpath(tmp_path):
    """Loaded from `run`'s directory (the start-up hook beside the package), the workers on the
    driver's machine get that directory first on PYTHONPATH, as every process under `run`."""
    injected = tmp_path / "inject"
    injected.mkdir()
    (injected / "sitecustomize.py").write_text("")
    os.symlink(PACKAGE, injected / "assertscope")
    code = ("import json, os; from assertscope import ray; "
            "print(json.dumps(ray.runtime_env()['env_vars'].get('PYTHONPATH')))")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(injected)},
                         stdout=subprocess.PIPE, check=True, timeout=60).stdout
    assert json.loads(out) == str(injected)
    # Loaded from anywhere else, no PYTHONPATH entry.
    assert "PYTHONPATH" not in asc_ray.runtime_env(environ={"PYTHONPATH": str(injected)})["env_vars"]


def test_the_users_runtime_env_wins():
    guard = asc_ray.runtime_env(environ={"PYTHONPATH": ""}, report_dir="/shared/asc")
    guard["env_vars"]["PYTHONPATH"] = "/run/inject"
    mine = {"env_vars": {_contract.REPORT_DIR_ENV: "/mine", "PYTHONPATH": "/my/code"},
            "py_modules": ["/my/lib"], "worker_process_setup_hook": "mylib.setup", "pip": ["x"]}
    merged = asc_ray.merge(mine, guard)
    assert merged["env_vars"][_contract.REPORT_DIR_ENV] == "/mine"
    assert merged["env_vars"]["PYTHONPATH"] == "/run/inject" + os.pathsep + "/my/code"
    assert merged["py_modules"] == ["/my/lib", str(PACKAGE)]
    assert merged["worker_process_setup_hook"] == "mylib.setup"
    assert merged["pip"] == ["x"]
    assert mine["py_modules"] == ["/my/lib"], "the user's dict is left as it was"
    assert asc_ray.merge(None, guard)["worker_process_setup_hook"] == "assertscope.ray.setup_worker"


def test_the_hook_runs_the_users_own_hook_first(monkeypatch, tmp_path):
    (tmp_path / "myhook.py").write_text("def add(env):\n    env = dict(env or {})\n    env['pip'] = ['y']\n    return env\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(_contract.RAY_HOOK_ENV, "myhook.add")
    monkeypatch.setenv(_contract.RUN_ID_ENV, "r1")
    env = asc_ray.runtime_env_hook({"env_vars": {"A": "1"}})
    assert env["pip"] == ["y"]
    assert env["env_vars"]["A"] == "1" and env["env_vars"][_contract.RUN_ID_ENV] == "r1.ray"


def test_python_m_assertscope_ray_prints_the_runtime_env_for_ray_job_submit(tmp_path):
    out = subprocess.run([sys.executable, "-m", "assertscope.ray", "--report-dir", str(tmp_path), "--guard", "sync",
                          "--base", '{"env_vars": {"A": "1"}}'], stdout=subprocess.PIPE, check=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(PACKAGE.parent)}).stdout
    env = json.loads(out)
    assert env["env_vars"]["A"] == "1"
    assert env["env_vars"][_contract.REPORT_DIR_ENV] == str(tmp_path)
    assert env["env_vars"][_contract.GUARD_MODE_ENV] == "sync"
    assert env["env_vars"][_contract.RUN_ID_ENV].endswith(_contract.RAY_RUN_ID_SUFFIX)
    with pytest.raises(ValueError):
        asc_ray.runtime_env(mode="fast")


def test_the_setup_hook_arms_the_guard_where_the_start_up_hook_did_not_run():
    pytest.importorskip("torch")
    code = ("import os, sys; os.environ['ASSERTSCOPE_GUARD'] = '1'; from assertscope import ray; ray.setup_worker(); "
            "import torch, assertscope; print(assertscope.is_guarded())")
    out = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, check=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(PACKAGE.parent)}).stdout
    assert out.decode().strip() == "True"
