"""What the guard is switched to, and when a call must not be checked.

Every other module of the guard reads this one; it imports none of them.
"""

import threading

import torch

__all__ = ["state", "skip_call", "checkable", "mode_for", "Busy", "busy", "thread_state"]

from .._contract import GUARD_MODES as MODES


class State:
    """What guard() switched on."""

    enabled = False
    mode = "auto"  # "auto": async on CUDA, sync elsewhere; "sync"; "async" (any device)


state = State()
thread_state = threading.local()

_plain_types = {}
_is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", lambda: False)
_tracing_state = torch._C._get_tracing_state
_dispatch_depth = getattr(torch._C, "_len_torch_dispatch_stack", lambda: 0)
_functorch = getattr(getattr(torch._C, "_functorch", None), "is_functorch_wrapped_tensor", None)


def busy():
    return getattr(thread_state, "busy", False)


def skip_call():
    """True where checks must not run: inside assertscope itself, while torch.compile or
    torch.jit.trace records a graph, or under a dispatch mode (FakeTensor, meta tracing)."""
    return (
        _is_compiling()  # first: torch.compile folds it to True and never traces the rest
        or getattr(thread_state, "busy", False)
        or _tracing_state() is not None
        or _dispatch_depth() > 0
    )


def checkable(value):
    """A plain, strided tensor on a CPU or CUDA device whose values can be read."""
    cls = type(value)
    plain = _plain_types.get(cls)
    if plain is None:
        plain = issubclass(cls, torch.Tensor) and (
            cls is torch.Tensor
            or getattr(cls, "__torch_function__", None) is torch._C._disabled_torch_function_impl
        )
        _plain_types[cls] = plain
    if not plain:
        return False
    if value.layout is not torch.strided or not (value.is_cpu or value.is_cuda):
        return False
    return not (_functorch is not None and _functorch(value))


def mode_for(tensor):
    """"sync" or "async" for a rule on this tensor, under the current mode."""
    mode = state.mode
    if mode == "auto":
        return "async" if tensor.is_cuda else "sync"
    return mode


class Busy:
    """Marks code that runs torch ops for the guard itself: wrappers let those through."""

    __slots__ = ("previous",)

    def __enter__(self):
        self.previous = getattr(thread_state, "busy", False)
        thread_state.busy = True

    def __exit__(self, *exc):
        thread_state.busy = self.previous
