"""F.binary_cross_entropy / nn.BCELoss: input and target are probabilities in [0, 1].

What: every input and every target value lies in [0, 1]; NaN fails the comparison.
Why: the CUDA kernel asserts `input_val >= zero && input_val <= one` (and the same for the
target) in Loss.cu.
Example: raw logits passed to BCELoss (no sigmoid), targets of -1/1, a model that went NaN.
Fix: BCEWithLogitsLoss on the logits; 0/1 targets; find where the NaN starts.
"""

import torch

from ... import kb
from ...errors import Finding
from .._analysis import locate, positions_text, plural
from .._call import Check
from .._state import checkable
from .._rules import UnitIntervalRule
from ..._summary import number


def unit_interval_facts(tensor):
    """(bad count, nan count, suffix text, values dict) for entries outside [0, 1] or NaN."""
    t = tensor.detach()
    bad = ~((t >= 0) & (t <= 1))
    count, values, positions = locate(t, bad)
    nan_count = int(torch.isnan(t).sum())
    finite = t[~torch.isnan(t)]
    facts = {
        "min": finite.min().item() if finite.numel() else None,
        "max": finite.max().item() if finite.numel() else None,
        "bad_count": count,
        "nan_count": nan_count,
        "numel": t.numel(),
        "positions": positions,
        "bad_values": values,
    }
    return count, nan_count, positions_text(values, positions, count), facts


class BinaryCrossEntropyCheck(Check):
    op = "binary_cross_entropy"

    def rules(self, call):
        rules = []
        for name in ("input", "target"):
            value = call.get(name)
            if checkable(value) and value.is_floating_point() and value.numel():
                rules.append(UnitIntervalRule(name, value))
        return rules

    def explain(self, call, rule):
        count, nan_count, suffix, facts = unit_interval_facts(rule.tensor)
        which = rule.arg
        only_nan = nan_count == count
        found = f"{count} of {facts['numel']} {which} {plural(facts['numel'], 'value')} outside [0, 1]: {suffix}"
        if nan_count:
            found += f" ({nan_count} NaN)"
        cause = "nan-inf" if only_nan else "bce-input-range"
        low, high = number(facts["min"]), number(facts["max"])
        if only_nan:
            hint = kb.hint("nan-reached-loss", which=which, nan_count=nan_count, numel=facts["numel"])
        elif which == "input":
            hint = kb.hint("bce-raw-logits", min=low, max=high)
        else:
            hint = kb.hint("bce-target-range", min=low, max=high)
        tensors = [(name, call.get(name)) for name in ("input", "target")]
        return Finding(cause, found, facts, tensors, hint)


_BCE = BinaryCrossEntropyCheck()

PATCHES = [
    ("torch._C._nn", "binary_cross_entropy", _BCE, ("input", "target", "weight", "reduction")),
]
