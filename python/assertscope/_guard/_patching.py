"""Replacing an attribute of a module or class, and putting it back: the one way the
guard patches what it does not own. A module that patches keeps one `Patches`, installs
through it, and undoes it as a whole."""

import functools
import importlib

__all__ = ["Patches", "resolve", "current", "replace", "wraps"]


def resolve(path):
    """'torch.Tensor' -> the object."""
    module_path, _, attribute = path.rpartition(".")
    try:
        return importlib.import_module(path)
    except ImportError:
        if not module_path:
            raise
        return getattr(resolve(module_path), attribute)


def current(owner, name):
    """What owner.name is now: a class's own attribute as stored (a staticmethod stays one),
    else what attribute lookup finds. AttributeError where there is none."""
    if isinstance(owner, type) and name in vars(owner):
        return vars(owner)[name]
    return getattr(owner, name)


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


class Patches:
    """Replacements made together and undone together, the last first."""

    def __init__(self):
        self._undo = []

    def __bool__(self):
        """Whether anything is in place (install() is idempotent by asking this)."""
        return bool(self._undo)

    def replace(self, owner, name, new):
        """owner.name = new, until undo(); left alone then if someone replaced it after us."""
        self._undo.append(replace(owner, name, new))
        return new

    def also_undo(self, undo, first=False):
        """Runs `undo` with the rest: last of all, or `first` of all."""
        if first:
            self._undo.append(undo)
        else:
            self._undo.insert(0, undo)

    def undo(self):
        while self._undo:
            self._undo.pop()()


def wraps(wrapper, original):
    """`wrapper` dressed as `original` (name, docstring, __wrapped__) for help() and tracebacks.

    __module__ stays ours: tracers (TorchScript, torch.compile) must not take the wrapper
    for a function of torch's. Builtins have no __dict__ to copy, and some no __qualname__:
    update_wrapper skips what is missing.
    """
    return functools.update_wrapper(wrapper, original, assigned=("__name__", "__qualname__", "__doc__"), updated=())
