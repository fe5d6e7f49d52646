"""Pieces shared by the checks."""

import torch

from .._call import Check
from .._state import checkable
from .._rules import RangeRule
from .._analysis import range_report, interval, plural
from ... import kb
from ...errors import Finding

__all__ = ["is_index_tensor", "dim_size", "IndexRangeCheck"]


_INDEX_DTYPES = frozenset(
    getattr(torch, name) for name in ("int8", "int16", "int32", "int64", "uint16", "uint32", "uint64") if hasattr(torch, name)
)


def is_index_tensor(value):
    """A checkable tensor of an integer dtype (bool and uint8 index as masks, not here)."""
    return checkable(value) and value.dtype in _INDEX_DTYPES


def dim_size(tensor, dim):
    """(normalised dim, size) of a dimension; a 0-dim tensor counts as size 1. None if dim is odd."""
    if not isinstance(dim, int) or isinstance(dim, bool):
        return None
    ndim = max(tensor.dim(), 1)
    if not -ndim <= dim < ndim:
        return None  # torch raises its own IndexError
    dim %= ndim
    return dim, (tensor.shape[dim] if tensor.dim() else 1)


class IndexRangeCheck(Check):
    """An op whose kernel asserts that one index tensor lies in a range along one dimension.

    Subclasses set `op`, `cause`, `index` (the parameter name) and implement `bounds(call)`
    -> (low, high, what) or None, where `what()` names what is indexed ("dimension 1 of a
    tensor of shape [4, 32]").
    """

    cause = "index-out-of-bounds"
    index = "index"

    def bounds(self, call):
        raise NotImplementedError

    def rules(self, call):
        index = call.get(self.index)
        if not is_index_tensor(index) or index.numel() == 0:
            return []
        found = self.bounds(call)
        if found is None:
            return []
        low, high, _ = found
        return [RangeRule(self.index, index, low, high)]

    def hint(self, call, facts, low, high, what):
        if facts["min"] is not None and facts["min"] < 0 and low == 0:
            return kb.hint("negative-index-not-wrapped", op=self.op, min=facts["min"])
        if facts["max"] is not None and high is not None and facts["max"] >= high:
            return kb.hint("index-past-tensor", value=facts["max"], range=interval(low, high), what=what)
        if facts["min"] is not None and facts["min"] < low:
            return kb.hint("index-past-tensor", value=facts["min"], range=interval(low, high), what=what)
        return None

    def tensors(self, call):
        return [("index", call.get(self.index)), ("input", call.get("input"))]

    def explain(self, call, rule):
        low, high, what = self.bounds(call)
        what = what()  # a text only the error path needs
        suffix, facts = range_report(rule.tensor, low, high)
        count = facts["bad_count"]
        note = "; negative indices are not allowed" if low == 0 else ""
        found = (
            f"{count} of {facts['numel']} {plural(facts['numel'], 'index')} outside {interval(low, high)} "
            f"({what}{note}): {suffix}"
        )
        return Finding(self.cause, found, facts, self.tensors(call), self.hint(call, facts, low, high, what))


def function_and_methods(name, check, names):
    """Patches for torch.<name>, Tensor.<name>_ (in place) and Tensor.<name>."""
    return [
        ("torch", name, check, names),
        ("torch.Tensor", name + "_", check, names),
        ("torch.Tensor", name, check, names),
    ]
