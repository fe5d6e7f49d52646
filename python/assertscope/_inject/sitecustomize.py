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

from assertscope import _contract

_warned = []


def _warn(message):
    if not _warned:
        _warned.append(message)
        sys.stderr.write(f"assertscope: {message}\n")
        sys.stderr.flush()


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


def _enabled(name):
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _after_torch_import():
    """Switches on what the environment asks for; never raises."""
    try:
        if _enabled(_contract.CPU_ENV):
            from assertscope.cpu import on_cpu

            on_cpu()
        if _enabled(_contract.GUARD_ENV):
            import assertscope

            default = _contract.GUARD_MODES[0]
            mode = os.environ.get(_contract.GUARD_MODE_ENV, default).strip().lower() or default
            if mode not in _contract.GUARD_MODES:
                *others, last = _contract.GUARD_MODES
                names = f"{', '.join(others)} or {last}"
                _warn(f"{_contract.GUARD_MODE_ENV}={mode!r} is not {names}; using {default}")
                mode = default
            assertscope.guard(mode=mode)
    except Exception as exc:  # noqa: BLE001 - the user's program must run even if we cannot
        _warn(f"could not switch the guard on ({exc.__class__.__name__}: {exc}); running without it")


class _AfterLoader:
    """Wraps torch's loader: runs the original, then our set-up."""

    def __init__(self, loader, hook):
        self.loader = loader
        self.hook = hook

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        try:
            self.loader.exec_module(module)
        finally:
            spec = getattr(module, "__spec__", None)
            if spec is not None:
                spec.loader = self.loader
            module.__loader__ = self.loader
            self.hook.remove()
        _after_torch_import()

    def __getattr__(self, name):
        return getattr(self.loader, name)


class TorchImportHook:
    """A meta path finder that only ever answers for `torch`, to run code after it loads."""

    assertscope_hook = True

    def __init__(self):
        self.finding = False

    def find_spec(self, name, path=None, target=None):
        if name != "torch" or self.finding:
            return None
        self.finding = True
        try:
            spec = None
            for finder in list(sys.meta_path):
                find = getattr(finder, "find_spec", None)
                if finder is self or find is None:
                    continue
                spec = find(name, path, target)
                if spec is not None:
                    break
        finally:
            self.finding = False
        if spec is None:
            _warn(f"torch is not installed for this Python ({sys.executable}); running without the guard")
            self.remove()
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _AfterLoader(spec.loader, self)
        return spec

    def remove(self):
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass


def install():
    if not (_enabled(_contract.GUARD_ENV) or _enabled(_contract.CPU_ENV)):
        return
    if sys.version_info < (3, 9):
        _warn("the guard needs Python 3.9 or newer; running without it")
        return
    from assertscope import _outcome

    _outcome.install()
    if "torch" in sys.modules:
        _after_torch_import()
    elif not any(getattr(finder, "assertscope_hook", False) for finder in sys.meta_path):
        sys.meta_path.insert(0, TorchImportHook())


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
