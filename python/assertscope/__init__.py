"""assertscope: find the root cause of CUDA device-side asserts in PyTorch.

    import assertscope
    assertscope.guard()          # catch bad values before any CUDA kernel sees them
    assertscope.on_cpu()         # run code written for CUDA on the CPU, unmodified

Importing assertscope is cheap and does not import torch; torch is imported when the guard
or the CPU remapping is switched on.
"""

__all__ = ["guard", "unguard", "is_guarded", "on_cpu", "GuardError", "__version__"]

_LAZY = {
    "guard": ("assertscope._guard", "guard"),
    "unguard": ("assertscope._guard", "unguard"),
    "is_guarded": ("assertscope._guard", "is_guarded"),
    "on_cpu": ("assertscope.cpu", "on_cpu"),
    "GuardError": ("assertscope.errors", "GuardError"),
}


def __getattr__(name):
    if name == "__version__":
        from importlib import metadata

        try:
            return metadata.version("assertscope")
        except metadata.PackageNotFoundError:  # a source checkout or an injected copy
            return "0.1.0"
    if name in _LAZY:
        import importlib

        module_name, attribute = _LAZY[name]
        value = getattr(importlib.import_module(module_name), attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'assertscope' has no attribute {name!r}")


def load_ipython_extension(ipython):
    """`%load_ext assertscope`: the guard on for the kernel, GuardErrors drawn as reports, and
    `%assertscope` (alias `%explain`) to explain the last exception."""
    from ._notebook import load_ipython_extension

    load_ipython_extension(ipython)


def unload_ipython_extension(ipython):
    from ._notebook import unload_ipython_extension

    unload_ipython_extension(ipython)


def __dir__():
    return sorted(list(globals()) + list(_LAZY) + ["__version__"])
