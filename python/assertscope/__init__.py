"""assertscope: find the root cause of CUDA device-side asserts in PyTorch."""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("assertscope")
except _metadata.PackageNotFoundError:  # running from a source checkout or an injected copy
    __version__ = "0.1.0"

__all__ = ["__version__"]
