"""torch.quantile / torch.nanquantile: a non-empty input and q in [0, 1].

What: the input has at least one element; every q lies in [0, 1] (NaN fails).
Why: Sorting.cpp refuses an empty input ("quantile() input tensor must be non-empty") on
every device, and q outside [0, 1] ("quantile() q values must be in the range [0, 1]") only
on the CPU: on CUDA the check is skipped to avoid a sync, and the result is garbage.
Example: `torch.quantile(errs[mask], 0.95)` when the mask selects nothing; q=95 for the
95th percentile.
Fix: handle the empty case first; give q as a fraction (0.95), not a percentage.
"""

import torch

from ... import kb
from ...errors import Finding
from ..._summary import number
from .._analysis import locate, plural, positions_text
from .._call import Check
from .._state import checkable
from .._rules import UnitIntervalRule
from ._common import HostRule


class QuantileCheck(Check):
    def __init__(self, op):
        self.op = op

    def rules(self, call):
        tensor = call.get("input")
        if not checkable(tensor) or not tensor.is_floating_point():
            return []
        if tensor.numel() == 0:
            return [HostRule("input", tensor, "empty")]
        q = call.get("q")
        if isinstance(q, (int, float)) and not isinstance(q, bool):
            return [] if 0 <= q <= 1 else [HostRule("q", tensor, q)]
        if checkable(q) and q.is_floating_point() and q.numel():
            return [UnitIntervalRule("q", q)]
        return []

    def explain(self, call, rule):
        if isinstance(rule, HostRule) and rule.problem == "empty":
            shape = list(rule.tensor.shape)
            found = f"the input has no elements (shape {shape})"
            hint = kb.hint("quantile-of-nothing", op=self.op, shape=str(shape))
            return Finding("empty-tensor", found, {"numel": 0, "shape": shape}, [("input", rule.tensor)], hint)
        if isinstance(rule, HostRule):
            values = [rule.problem]
            found = f"q = {number(rule.problem)}, outside [0, 1]"
            facts = {"min": rule.problem, "max": rule.problem, "bad_count": 1, "numel": 1}
            tensors = [("input", rule.tensor)]
        else:
            q = rule.tensor.detach()
            bad = ~((q >= 0) & (q <= 1))
            count, values, positions = locate(q, bad)
            found = (
                f"{count} of {q.numel()} q {plural(q.numel(), 'value')} outside [0, 1]: "
                f"{positions_text(values, positions, count)}"
            )
            finite = q[~torch.isnan(q)]
            facts = {
                "min": finite.min().item() if finite.numel() else None,
                "max": finite.max().item() if finite.numel() else None,
                "bad_count": count,
                "numel": q.numel(),
                "positions": positions,
                "bad_values": values,
            }
            tensors = [("q", rule.tensor), ("input", call.get("input"))]
        percent = [v for v in values if v == v and 1 < v <= 100]
        hint = None
        if percent:
            hint = kb.hint("quantile-percent", q=number(percent[0]), fraction=number(percent[0] / 100))
        return Finding("value-domain", found, facts, tensors, hint)


_QUANTILE = QuantileCheck("quantile")
_NANQUANTILE = QuantileCheck("nanquantile")

_NAMES = ("input", "q", "dim", "keepdim")
PATCHES = [
    ("torch", "quantile", _QUANTILE, _NAMES),
    ("torch.Tensor", "quantile", _QUANTILE, _NAMES),
    ("torch", "nanquantile", _NANQUANTILE, _NAMES),
    ("torch.Tensor", "nanquantile", _NANQUANTILE, _NAMES),
]
