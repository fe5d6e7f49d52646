"""Arming the guard in a Python process from the environment `assertscope run` sets: the
guard (and CPU remapping) switched on as torch loads, or at once when it is loaded already.
The start-up hook (sitecustomize.py) calls `install()` as Python starts; a Ray worker that
`run` did not start calls it from its setup hook (assertscope.ray). Nothing here raises: if
anything fails it warns once on stderr and the program runs unguarded.
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
