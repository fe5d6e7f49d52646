"""The guard in the workers of a Ray cluster, through Ray's own mechanisms.

A Ray cluster's workers are started by its raylets, not by the job's driver, so the
environment `assertscope run` gives the driver never reaches them. A job's `runtime_env`
does: it is applied to every worker of the job on every node. This module builds the one
that arms the guard:

- `env_vars`: the guard's variables (mode, CPU remapping, where reports go, the run they
  belong to) and, first on PYTHONPATH, the directory holding the injected package and its
  start-up hook, so a worker on the driver's machine is guarded as it starts, as every
  process under `run` is;
- `py_modules`: the package itself, which Ray copies to every node;
- `worker_process_setup_hook`: `assertscope.ray.setup_worker`, which arms the guard in a
  worker whose machine lacks that directory (another node).

Under `run`, the driver's `ray.init` (its own, or the one Ray Train makes) merges it into the
job's runtime_env through Ray's RAY_RUNTIME_ENV_HOOK, which `run` points at
`runtime_env_hook`. A job submitted with `ray job submit` has no `run` around its driver;
its runtime_env comes from the command line:

    ray job submit --runtime-env-json "$(python -m assertscope.ray --report-dir /shared/asc)" -- python train.py

Nothing here imports Ray: the module is used before and outside it.
"""

import argparse
import importlib
import json
import os
import sys

from . import _contract

HOOK_ENV = "RAY_RUNTIME_ENV_HOOK"
SETUP_HOOK = "assertscope.ray.setup_worker"
# The variables a worker needs, as `run` sets them for the driver.
_PASSED_ON = (
    _contract.GUARD_ENV,
    _contract.GUARD_MODE_ENV,
    _contract.CPU_ENV,
    _contract.REPORT_DIR_ENV,
    _contract.RUN_ID_ENV,
)


def package_dir():
    """The directory of the `assertscope` package (a `py_modules` entry)."""
    return os.path.dirname(os.path.abspath(__file__))


def runtime_env(report_dir=None, mode=None, cpu=None, run_id=None, environ=None):
    """The runtime_env that arms the guard in every worker of a Ray job.

    Without arguments it passes on what `assertscope run` set in this process's
    environment; `report_dir`, `mode`, `cpu` and `run_id` override it (a report directory
    must be one every node can write to: the same path on a shared file system).
    """
    environ = os.environ if environ is None else environ
    env_vars = {name: environ[name] for name in _PASSED_ON if environ.get(name)}
    env_vars.setdefault(_contract.GUARD_ENV, "1")
    if mode is not None:
        if mode not in _contract.GUARD_MODES:
            raise ValueError(f"mode must be one of {', '.join(_contract.GUARD_MODES)}, not {mode!r}")
        env_vars[_contract.GUARD_MODE_ENV] = mode
    if cpu:
        env_vars[_contract.CPU_ENV] = "1"
    if report_dir is not None:
        env_vars[_contract.REPORT_DIR_ENV] = os.path.abspath(report_dir)
    if run_id is not None:
        env_vars[_contract.RUN_ID_ENV] = run_id
    run = env_vars.get(_contract.RUN_ID_ENV)
    if run and not run.endswith(_contract.RAY_RUN_ID_SUFFIX):
        # Ray ends or retries a job whose worker failed: `run` reads these reports under
        # their own id, and never stops the job for them.
        env_vars[_contract.RUN_ID_ENV] = run + _contract.RAY_RUN_ID_SUFFIX
    injected = _injected_dir(environ)
    if injected:
        env_vars["PYTHONPATH"] = injected
    return {"env_vars": env_vars, "py_modules": [package_dir()], "worker_process_setup_hook": SETUP_HOOK}


def _injected_dir(environ):
    """The directory `run` put first on PYTHONPATH, when this package was loaded from it
    (it holds the start-up hook beside the package)."""
    parent = os.path.dirname(package_dir())
    first = environ.get("PYTHONPATH", "").split(os.pathsep)[0]
    if first and os.path.isfile(os.path.join(parent, "sitecustomize.py")):
        try:
            if os.path.samefile(first, parent):
                return parent
        except OSError:
            return None
    return None


def merge(user, guard):
    """The user's runtime_env with the guard's added: the user's own values win (an
    environment variable they set, their own setup hook), the guard's PYTHONPATH entry goes
    first, and the package is added to their py_modules."""
    merged = dict(user or {})
    env_vars = dict(guard["env_vars"])
    theirs = dict(merged.get("env_vars") or {})
    if "PYTHONPATH" in env_vars and theirs.get("PYTHONPATH"):
        theirs["PYTHONPATH"] = env_vars["PYTHONPATH"] + os.pathsep + theirs["PYTHONPATH"]
    env_vars.update(theirs)
    merged["env_vars"] = env_vars
    modules = list(merged.get("py_modules") or [])
    if not any(isinstance(m, str) and os.path.basename(m.rstrip("/")) == "assertscope" for m in modules):
        modules += guard["py_modules"]
    merged["py_modules"] = modules
    if not merged.get("worker_process_setup_hook"):
        merged["worker_process_setup_hook"] = guard["worker_process_setup_hook"]
    return merged


def runtime_env_hook(user_runtime_env):
    """Ray's RAY_RUNTIME_ENV_HOOK: `ray.init` passes the job's runtime_env (a dict or None)
    and uses what this returns. A hook the user had set runs first (`run` keeps its name in
    ASSERTSCOPE_RAY_HOOK)."""
    theirs = os.environ.get(_contract.RAY_HOOK_ENV, "").strip()
    if theirs and theirs != f"{__name__}.runtime_env_hook":
        module, _, name = theirs.rpartition(".")
        user_runtime_env = getattr(importlib.import_module(module), name)(user_runtime_env)
    if hasattr(user_runtime_env, "to_dict"):  # a ray.runtime_env.RuntimeEnv
        user_runtime_env = user_runtime_env.to_dict()
    return merge(user_runtime_env, runtime_env())


def setup_worker():
    """Ray's worker_process_setup_hook: arms the guard in a worker the start-up hook did not
    reach (a worker on another node than the driver's)."""
    if "assertscope._inject.sitecustomize" in sys.modules:
        return
    from ._inject import arm

    arm.install()


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m assertscope.ray",
        description="Print the runtime_env (JSON) that arms assertscope's guard in every worker of a Ray job, "
        "for `ray job submit --runtime-env-json`.",
    )
    parser.add_argument("--report-dir", help="where each worker's guard writes its report: a directory every node can write to")
    parser.add_argument("--guard", choices=_contract.GUARD_MODES, default=None, help="the guard's mode (default auto)")
    parser.add_argument("--cpu", action="store_true", help="run CUDA code on the CPU in the workers")
    parser.add_argument("--run-id", help="tag the reports of this job (default: a fresh id)")
    parser.add_argument("--base", help="a runtime_env (JSON) of your own to add the guard to")
    args = parser.parse_args(argv)
    base = json.loads(args.base) if args.base else None
    run_id = args.run_id or os.urandom(8).hex()
    env = runtime_env(report_dir=args.report_dir, mode=args.guard, cpu=args.cpu, run_id=run_id, environ={})
    print(json.dumps(merge(base, env)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
