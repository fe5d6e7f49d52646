"""torch.histc: a finite range whose minimum is below its maximum.

What: with min == max (the default 0, 0) histc takes its range from the data, so every
entry must be finite; an explicit range must be finite with min < max.
Why: the kernels refuse the range, "torch.histc: range of [nan, nan] is not finite" and
"max must be larger than min" (Histogram.cpp on the CPU, SummaryOps.cu on CUDA, which reads
the data's extremes back to the host first).
Example: `torch.histc(scores, bins=50)` on scores a diverged model made NaN; `min=1, max=0`.
Fix: find where the NaN starts, or pass an explicit finite range (NaN entries are then left out).
"""

import math

import torch

from ... import kb
from ...errors import Finding
from ..._summary import number
from .._analysis import plural
from .._call import Check
from .._state import checkable
from ._common import FiniteRule, HostRule, domain_facts


def _number(value):
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return value.item()
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class HistcCheck(Check):
    op = "histc"

    def rules(self, call):
        tensor = call.get("input")
        if not checkable(tensor) or not tensor.is_floating_point() or tensor.numel() == 0:
            return []
        low, high = _number(call.get("min", 0)), _number(call.get("max", 0))
        if low is None or high is None:
            return []
        if low == high:
            return [FiniteRule("input", tensor)]
        if not (math.isfinite(low) and math.isfinite(high)) or low > high:
            return [HostRule("input", tensor, (low, high))]
        return []

    def explain(self, call, rule):
        if isinstance(rule, HostRule):
            low, high = rule.problem
            finite = math.isfinite(low) and math.isfinite(high)
            found = f"the range given is [{number(low)}, {number(high)}]" + ("" if finite else ", which is not finite")
            facts = {"min": low, "max": high}
            cause = "value-domain" if finite else "nan-inf"
            hint = kb.hint("histc-range-order", min=number(low), max=number(high)) if finite else None
            return Finding(cause, found, facts, [("input", rule.tensor)], hint)
        t = rule.tensor.detach()
        suffix, facts = domain_facts(t, ~torch.isfinite(t))
        found = (
            f"{facts['bad_count']} of {facts['numel']} input {plural(facts['numel'], 'value')} "
            f"are NaN or inf ({facts['nan_count']} NaN, {facts['inf_count']} inf), and histc takes its "
            f"range from the data (min == max): {suffix}"
        )
        hint = kb.hint("histc-range-from-data", nan_count=facts["nan_count"], inf_count=facts["inf_count"])
        return Finding("nan-inf", found, facts, [("input", rule.tensor)], hint)


_HISTC = HistcCheck()

_NAMES = ("input", "bins", "min", "max")
PATCHES = [
    ("torch", "histc", _HISTC, _NAMES),
    ("torch.Tensor", "histc", _HISTC, _NAMES),
]
