"""Loading the target a scan iterates (a Dataset, a DataLoader, a function returning one) and
the model it checks for BatchNorm."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys


class ScanError(Exception):
    """The target cannot be loaded or iterated; the message is one line for the user."""


# --------------------------------------------------------------------------- loading

def locate(spec: str):
    """``(where, name, path)`` of ``file.py:name`` (``path`` the file's) or of
    ``package.module:name`` (``path`` None); checked before anything is imported."""
    if ":" not in spec:
        raise ScanError(f"{spec}: name the object as path/to/file.py:name or package.module:name")
    where, name = spec.rsplit(":", 1)
    if not name:
        raise ScanError(f"{spec}: nothing after ':'; name the Dataset, DataLoader or function")
    if where.endswith(".py") or os.sep in where or os.path.isfile(where):
        path = os.path.abspath(where)
        if not os.path.isfile(path):
            raise ScanError(f"{where}: no such file")
        return where, name, path
    return where, name, None


def import_torch():
    """torch, or a one-line error saying which Python lacks it."""
    try:
        import torch
    except ImportError as e:
        raise ScanError(
            f"{sys.executable} cannot import torch ({one_line(e)}): pass --python PATH to the Python that has it"
        ) from None
    return torch


def load_target(spec: str):
    """Imports ``file.py:name`` or ``package.module:name`` and returns the object."""
    where, name, path = locate(spec)
    if path is not None:
        directory = os.path.dirname(path)
        if directory not in sys.path:
            sys.path.insert(0, directory)
        # The module's real name, so that worker processes started with 'spawn' can
        # import it again (and __main__ guards in it do not run).
        module_name = os.path.splitext(os.path.basename(path))[0]
        module_spec = importlib.util.spec_from_file_location(module_name, path)
        if module_spec is None or module_spec.loader is None:
            raise ScanError(f"{where}: cannot be imported as a Python module")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_name] = module
        module_spec.loader.exec_module(module)
    else:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        module = importlib.import_module(where)
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise ScanError(f"{spec}: {where} has no attribute {part!r}; it has: {candidates(module)}")
        obj = getattr(obj, part)
    return obj


def candidates(module) -> str:
    """The module's names that could be scanned, for an error message."""
    from torch.utils.data import DataLoader, Dataset

    names = []
    for key, value in vars(module).items():
        if key.startswith("_"):
            continue
        if isinstance(value, (Dataset, DataLoader)) or (
            inspect.isfunction(value) and getattr(value, "__module__", None) == module.__name__
        ):
            names.append(key)
    return ", ".join(names[:20]) or "no Dataset, DataLoader or function"


def resolve(obj, spec: str):
    """A Dataset or DataLoader from the object, calling it when it is a function."""
    from torch.utils.data import DataLoader, Dataset

    if not isinstance(obj, (Dataset, DataLoader)) and callable(obj):
        try:
            obj = obj()
        except TypeError as e:
            raise ScanError(f"{spec}: calling it with no arguments failed: {e}") from None
    if isinstance(obj, (Dataset, DataLoader)):
        return obj
    if hasattr(obj, "__getitem__") and hasattr(obj, "__len__"):
        return obj
    raise ScanError(f"{spec} is a {type(obj).__name__}, not a Dataset, a DataLoader or a function returning one")



def model_has_batchnorm(spec):
    """Whether the model named by ``--model`` has a BatchNorm layer; None without one."""
    if spec is None:
        return None
    import torch

    model = load_target(spec)
    if not isinstance(model, torch.nn.Module) and callable(model):
        model = model()
    if not isinstance(model, torch.nn.Module):
        raise ScanError(f"{spec} is a {type(model).__name__}, not an nn.Module")
    return any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in model.modules())


def one_line(e) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__
