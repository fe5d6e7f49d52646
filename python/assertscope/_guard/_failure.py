"""Turning a failed rule into the GuardError the user sees (and the report `run` reads)."""

import sys

import torch

from ..errors import build, report
from ._call import Call

__all__ = ["failure", "cpu_refusal", "writing_into_copies"]


def failure(check, call, rule, location, note=None, pytorch_error=None):
    """The GuardError for a failed rule at a location (a dict from _frames.location_dict).

    pytorch_error: the exception PyTorch itself raised for this call, if it refused it: the
    GuardError is of its type and its message goes first.
    """
    finding = check.explain(call, rule)
    if pytorch_error is not None:
        error = build(check.op, finding, location, note, type(pytorch_error), str(pytorch_error))
    else:
        error = build(check.op, finding, location, note, check.pytorch_error)
    from .origin import attach  # the facts of where the bad value came from (error path only)

    attach.explain(error, check, call, rule, finding, location, sys._getframe(1))
    return report(error)


def cpu_refusal(check, original, call, writes_input):
    """The exception PyTorch itself raises for this call on the CPU, where its CPU kernel
    checks the values the guard found bad (None elsewhere, or if it raises nothing): the
    call runs as it is, writing into copies, so nothing the user has changes."""
    if check.checked_by_cpu_kernel is None:
        return None
    tensors = [v for v in (*call.args, *call.kwargs.values()) if isinstance(v, torch.Tensor)]
    if not tensors or any(not t.is_cpu for t in tensors):
        return None
    try:
        copied = writing_into_copies(call, writes_input)
        original(*copied.args, **copied.kwargs)
    except Exception as error:  # noqa: BLE001 - whatever PyTorch raises is its answer
        return error
    return None


def _copy(tensor):
    """A copy PyTorch treats as it treats `tensor` when written to (a leaf that requires grad
    stays one, so the in-place refusal for it remains)."""
    if not isinstance(tensor, torch.Tensor):
        return tensor
    if tensor.is_leaf:
        return tensor.detach().clone().requires_grad_(tensor.requires_grad)
    return tensor.clone()


def writing_into_copies(call, writes_input):
    """The call with the tensors it writes (its first argument if `writes_input`, `out=`)
    replaced by copies."""
    if writes_input and call.args:
        call = Call(call.names, (_copy(call.args[0]),) + tuple(call.args[1:]), call.kwargs)
    out = call.kwargs.get("out")
    if out is not None:
        copied = type(out)(_copy(o) for o in out) if isinstance(out, (list, tuple)) else _copy(out)
        call = Call(call.names, call.args, dict(call.kwargs, out=copied))
    return call
