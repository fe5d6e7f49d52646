"""Installing the guard: each guarded op is replaced, where Python looks it up, by a small
wrapper that runs its check and then the original.

Only the ops in the checks' tables are touched; everything else keeps running at full
speed (no TorchFunctionMode over every op). The places were chosen so that every usual way
of calling an op reaches a wrapper:
  * F.cross_entropy, F.nll_loss, F.binary_cross_entropy, F.multi_margin_loss,
    F.max_unpool*d call `torch._C._nn.<kernel>` at run time: the wrapper sits there, so it
    also catches nn.CrossEntropyLoss & co. and functions imported with
    `from torch.nn.functional import cross_entropy` before the guard was switched on;
  * F.embedding, F.embedding_bag, F.ctc_loss call `torch.embedding`, `torch.embedding_bag`,
    `torch.ctc_loss` at run time: same;
  * torch.gather & co. are replaced in the torch namespace, and Tensor methods
    (x.gather, x[idx], x.index_add_) on torch.Tensor, which every tensor and nn.Parameter
    inherits from.
A builtin bound to another name before the guard started (`from torch import gather`) is
not seen; `assertscope run` switches the guard on as torch is imported, before user code.
"""

import importlib

import torch

from . import _engine

__all__ = ["install", "uninstall", "installed", "replace"]

_undo = []
_jit_ids = []


def resolve(path):
    """'torch.Tensor' -> the object."""
    module_path, _, attribute = path.rpartition(".")
    if path in ("torch",):
        return torch
    try:
        return importlib.import_module(path)
    except ImportError:
        return getattr(resolve(module_path), attribute)


def replace(owner, name, new):
    """Sets owner.name = new; returns a function that puts the original back."""
    is_class = isinstance(owner, type)
    had_own = name in vars(owner) if is_class else True
    old = vars(owner).get(name) if is_class else getattr(owner, name)
    setattr(owner, name, new)

    def undo():
        if getattr(owner, name, None) is not new:
            return  # someone replaced it after us: leave theirs alone
        if had_own:
            setattr(owner, name, old)
        else:
            delattr(owner, name)

    return undo


def _copy_metadata(wrapper, original, name):
    wrapper.__name__ = getattr(original, "__name__", name)
    wrapper.__qualname__ = getattr(original, "__qualname__", name)
    wrapper.__doc__ = getattr(original, "__doc__", None)
    wrapper.__wrapped__ = original
    return wrapper


def guarded(check, original, names):
    """The wrapper for one op: its check, then the original."""
    skip_call = _engine.skip_call
    run = _engine.run
    Call = _engine.Call

    def wrapper(*args, **kwargs):
        if skip_call():
            return original(*args, **kwargs)
        return run(check, original, Call(names, args, kwargs))

    return _copy_metadata(wrapper, original, check.op)


def _register_with_torchscript(wrapper, original):
    """torch.jit.script resolves torch.gather & co. by identity; point it at the wrapper too."""
    try:
        from torch.jit import _builtins

        name = _builtins._find_builtin(original)
        if name is not None:
            _builtins._get_builtin_table()[id(wrapper)] = name
            _jit_ids.append(id(wrapper))
    except Exception:  # noqa: BLE001 - scripting support is a courtesy, never a reason to fail
        pass


def install():
    """Puts every check's wrappers in place (idempotent)."""
    if _undo:
        return
    from .checks import PATCHES

    for owner_path, name, check, names in PATCHES:
        try:
            owner = resolve(owner_path)
            original = vars(owner)[name] if isinstance(owner, type) and name in vars(owner) else getattr(owner, name)
        except (ImportError, AttributeError):
            continue  # an op this torch does not have
        make = getattr(check, "wrapper", None)
        wrapper = (make(original) if make else None) or guarded(check, original, names)
        if make:
            _copy_metadata(wrapper, original, name)
        _undo.append(replace(owner, name, wrapper))
        _register_with_torchscript(wrapper, original)
    from . import origin  # construction sites and DataLoader batches, for the error path

    origin.install()
    _undo.insert(0, origin.uninstall)


def uninstall():
    while _undo:
        _undo.pop()()
    try:
        from torch.jit import _builtins

        table = _builtins._get_builtin_table()
        while _jit_ids:
            table.pop(_jit_ids.pop(), None)
    except Exception:  # noqa: BLE001
        _jit_ids.clear()


def installed():
    return bool(_undo)
