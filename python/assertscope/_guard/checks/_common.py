"""Pieces shared by the checks."""

import torch

from .._call import Check
from .._state import checkable
from .._rules import RangeRule, Rule, _item
from .._verified import ranges_of
from .._analysis import range_report, interval, plural, locate, positions_text
from ..._summary import number
from ... import kb
from ...errors import Finding

__all__ = [
    "is_index_tensor",
    "dim_size",
    "within",
    "IndexRangeCheck",
    "NonNegativeRule",
    "FiniteRule",
    "HostRule",
    "domain_facts",
    "NonNegativeCheck",
]


_INDEX_DTYPES = frozenset(
    getattr(torch, name) for name in ("int8", "int16", "int32", "int64", "uint16", "uint32", "uint64") if hasattr(torch, name)
)


def is_index_tensor(value):
    """A checkable tensor of an integer dtype (bool and uint8 index as masks, not here)."""
    return isinstance(value, torch.Tensor) and value.dtype in _INDEX_DTYPES and checkable(value)


def dim_size(tensor, dim):
    """(normalised dim, size) of a dimension; a 0-dim tensor counts as size 1. None if dim is odd."""
    if type(dim) is not int and (not isinstance(dim, int) or isinstance(dim, bool)):
        return None
    shape = tensor.shape
    ndim = len(shape)
    if not ndim:
        return (0, 1) if dim in (0, -1) else None
    if dim < 0:
        dim += ndim
        if dim < 0:
            return None  # torch raises its own IndexError
    elif dim >= ndim:
        return None
    return dim, shape[dim]


def within(known, low, high):
    """A remembered (min, max) inside [low, high) (high None: no upper bound)."""
    return known is not None and known[0] >= low and (high is None or known[1] < high)


class IndexRangeCheck(Check):
    """An op whose kernel asserts that one index tensor lies in a range along one dimension.

    Subclasses set `op`, `cause`, `index` (the parameter name) and implement
    `limits(call)` -> (low, high) or None (from shapes only: it runs on every call) and
    `what(call)`, which names what is indexed ("dimension 1 of a tensor of shape [4, 32]")
    on the error path.
    """

    cause = "index-out-of-bounds"
    index = "index"

    def limits(self, call):
        raise NotImplementedError

    def what(self, call):
        raise NotImplementedError

    def quick(self, call):
        facts = ranges_of(call.get(self.index))
        if facts is None:
            return False
        limits = self.limits(call)
        return limits is None or within(facts.get(None), *limits)

    def rules(self, call):
        index = call.get(self.index)
        if not is_index_tensor(index) or index.numel() == 0:
            return []
        limits = self.limits(call)
        if limits is None:
            return []
        return [RangeRule(self.index, index, *limits)]

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
        low, high = self.limits(call)
        what = self.what(call)
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


class NonNegativeRule(Rule):
    """Every entry is >= 0; NaN fails, as it fails the kernel's `x >= 0`."""

    __slots__ = ()

    def passes(self):
        low, _ = torch.aminmax(self.tensor.detach())
        return bool(_item(low) >= 0)

    def bad(self):
        return ~(self.tensor.detach() >= 0)

    def repaired(self, bad):
        return self.tensor.masked_fill(bad, 0)


class FiniteRule(Rule):
    """Every entry is finite: no NaN, no inf."""

    __slots__ = ()

    def passes(self):
        low, high = torch.aminmax(self.tensor.detach())
        low, high = _item(low), _item(high)
        # (aminmax is NaN when any entry is; inf shows in an extreme)
        return low == low and high == high and abs(low) != float("inf") and abs(high) != float("inf")

    def bad(self):
        return ~torch.isfinite(self.tensor.detach())

    def repaired(self, bad):
        return self.tensor.masked_fill(bad, 0)


class HostRule(Rule):
    """A problem known from shapes and Python numbers alone, which PyTorch refuses on the
    host on every device: it always fails, without reading values; the guard explains it."""

    __slots__ = ("problem",)
    host = True

    def __init__(self, arg, tensor, problem):
        super().__init__(arg, tensor)
        self.problem = problem

    def passes(self):
        return False

    def bad(self):
        return torch.ones((), dtype=torch.bool, device=self.tensor.device)

    def repaired(self, bad):
        return self.tensor


def domain_facts(tensor, bad):
    """(found suffix, facts) for the entries of `tensor` marked in `bad`: how many, where, the
    extremes of the finite entries and the NaN and inf counts."""
    t = tensor.detach()
    count, values, positions = locate(t, bad)
    floating = t.is_floating_point()
    finite = t[torch.isfinite(t)] if floating else t.reshape(-1)
    facts = {
        "min": finite.min().item() if finite.numel() else None,
        "max": finite.max().item() if finite.numel() else None,
        "bad_count": count,
        "numel": t.numel(),
        "nan_count": int(torch.isnan(t).sum()) if floating else 0,
        "inf_count": int(torch.isinf(t).sum()) if floating else 0,
        "positions": positions,
        "bad_values": values,
    }
    return positions_text(values, positions, count), facts


class NonNegativeCheck(Check):
    """An op whose kernel refuses negative (or NaN) entries of one floating argument."""

    def __init__(self, op, arg, what):
        self.op = op
        self.arg = arg
        self.what = what

    def rules(self, call):
        tensor = call.get(self.arg)
        if not checkable(tensor) or not tensor.is_floating_point() or tensor.numel() == 0:
            return []
        return [NonNegativeRule(self.arg, tensor)]

    def explain(self, call, rule):
        t = rule.tensor.detach()
        suffix, facts = domain_facts(t, ~(t >= 0))
        found = (
            f"{facts['bad_count']} of {facts['numel']} {self.what} {plural(facts['numel'], 'value')} "
            f"below 0 or NaN: {suffix}"
        )
        low = number(facts["min"]) if facts["min"] is not None else "NaN"
        hint = kb.hint("negative-parameter", op=self.op, what=self.what, min=low)
        return Finding("value-domain", found, facts, [(self.arg, rule.tensor)], hint)
