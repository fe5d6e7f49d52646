"""Replacing a torch function with one that remaps its device arguments to the CPU. The
replacements are never undone: code written for CUDA keeps running on the CPU for the rest
of the process."""

import functools

from .._guard._patching import Patches

# Never undone: code written for CUDA keeps running on the CPU for the rest of the process.
_patches = Patches()


def cpu_device(device):
    """The CPU for anything that names a CUDA device; other devices unchanged."""
    import torch

    if device is None or isinstance(device, bool):
        return device
    if isinstance(device, torch.device):
        return torch.device("cpu") if device.type == "cuda" else device
    if isinstance(device, str):
        return "cpu" if device.split(":", 1)[0].strip() == "cuda" else device
    if isinstance(device, int):
        return "cpu"  # a bare ordinal means a CUDA device
    return device


def _wrap(owner, name, make):
    original = getattr(owner, name, None)
    if original is None or getattr(original, "__assertscope_cpu__", False):
        return
    replacement = make(original)
    try:
        functools.update_wrapper(replacement, original)
    except (AttributeError, TypeError):
        pass
    replacement.__assertscope_cpu__ = True
    _patches.replace(owner, name, replacement)


def _remapping_device_kwarg(original):
    def factory(*args, **kwargs):
        if "device" in kwargs:
            kwargs["device"] = cpu_device(kwargs["device"])
        if kwargs.get("pin_memory"):
            kwargs["pin_memory"] = False
        return original(*args, **kwargs)

    return factory


def _tensor_to(original):
    import torch

    def to(self, *args, **kwargs):
        if args and isinstance(args[0], (str, int, torch.device)) and not isinstance(args[0], bool):
            args = (cpu_device(args[0]),) + args[1:]
        if "device" in kwargs:
            kwargs["device"] = cpu_device(kwargs["device"])
        return original(self, *args, **kwargs)

    return to


def _tensor_cuda(original):
    def cuda(self, device=None, non_blocking=False, memory_format=None):
        if memory_format is not None:
            return self.contiguous(memory_format=memory_format)
        return self

    return cuda


def _returning(value):
    """A replacement that ignores its arguments and answers `value` (called, if callable)."""

    def make(original):
        def replacement(*args, **kwargs):
            return value() if callable(value) else value

        return replacement

    return make



def _remapping_positional_device(original):
    def set_default_device(device):
        return original(cpu_device(device))

    return set_default_device

