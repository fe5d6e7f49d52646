"""assertscope's start-up hook, run by Python's `site` module in every process that
`assertscope run` starts (scripts, `python -m`, torchrun ranks, DataLoader workers,
multiprocessing children): `run` puts a directory holding this file (or a one-line shim
importing it) and the assertscope package first on PYTHONPATH.

It reads the environment `run` sets:
  ASSERTSCOPE_GUARD=1              switch the guard on
  ASSERTSCOPE_GUARD_MODE=auto|sync|async
  ASSERTSCOPE_CPU=1                run CUDA code on the CPU (assertscope.on_cpu())
  ASSERTSCOPE_REPORT_DIR=DIR       where the guard writes a JSON report per GuardError
and does the work when torch is imported (an import hook), so a process that never imports
torch pays almost nothing. It first runs the sitecustomize it hides (the next one on
sys.path), and it never breaks the program: if anything fails it warns once on stderr and
the program runs unguarded.
"""

import os
import sys

from assertscope._inject.arm import _warn, install


def _norm(path):
    return os.path.normcase(os.path.realpath(path or os.getcwd()))


def _run_hidden_sitecustomize():
    """Runs the sitecustomize that ours shadows, as site.py would have."""
    shim = sys.modules.get("sitecustomize")
    here = getattr(shim, "__file__", None) or __file__
    ours = {_norm(os.path.dirname(os.path.abspath(here))), _norm(os.path.dirname(os.path.abspath(__file__)))}
    rest = [p for p in sys.path if isinstance(p, str) and _norm(p) not in ours]
    # Most interpreters have none: a few stat calls decide that without the import machinery.
    if not any(
        os.path.isfile(os.path.join(p or ".", "sitecustomize.py")) or os.path.isdir(os.path.join(p or ".", "sitecustomize"))
        for p in rest
    ):
        return
    import importlib.util
    from importlib.machinery import PathFinder

    spec = PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # site.py reports a broken sitecustomize the same way and goes on
        sys.stderr.write(f"Error in sitecustomize ({spec.origin}); set PYTHONVERBOSE for traceback:\n")
        sys.stderr.write(f"{exc.__class__.__name__}: {exc}\n")


def _main():
    try:
        _run_hidden_sitecustomize()
    except Exception as exc:  # noqa: BLE001
        _warn(f"could not run the hidden sitecustomize ({exc.__class__.__name__}: {exc})")
    try:
        install()
    except Exception as exc:  # noqa: BLE001
        _warn(f"could not install the start-up hook ({exc.__class__.__name__}: {exc}); running without the guard")


_main()
