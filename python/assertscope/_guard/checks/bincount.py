"""torch.bincount: non-negative values, and weights as long as the input.

What: every value is >= 0; weights, when given, have one entry per value.
Why: SummaryOps.cpp / SummaryOps.cu refuse negative values ("bincount only supports 1-d
non-negative integral inputs.", after reading the minimum back from the device) and weights
of another length ("weights should be 1-d and have the same length as input").
Example: `torch.bincount(labels - 1)` with labels that were already 0-based; -1 padding.
Fix: count the labels as they are, or drop the padding first (`labels[labels >= 0]`).
"""

from ... import kb
from ...errors import Finding
from .._analysis import plural, range_report
from .._call import Check
from .._rules import RangeRule
from ._common import HostRule, is_index_tensor
from ..._summary import number


class BincountCheck(Check):
    op = "bincount"

    def rules(self, call):
        tensor = call.get("input")
        if not is_index_tensor(tensor) or tensor.dim() != 1:
            return []
        weights = call.get("weights")
        if weights is not None and hasattr(weights, "shape") and (weights.dim() != 1 or weights.shape[0] != tensor.shape[0]):
            return [HostRule("weights", tensor, (tuple(weights.shape), tensor.shape[0]))]
        if tensor.numel() == 0:
            return []
        return [RangeRule("input", tensor, 0, None)]

    def explain(self, call, rule):
        if isinstance(rule, HostRule):
            shape, length = rule.problem
            found = f"weights of shape {list(shape)} for {length} {plural(length, 'value')}: one weight per value is needed"
            facts = {"weights_shape": list(shape), "numel": length}
            return Finding("value-domain", found, facts, [("input", rule.tensor), ("weights", call.get("weights"))], None)
        suffix, facts = range_report(rule.tensor, 0, None)
        found = f"{facts['bad_count']} of {facts['numel']} {plural(facts['numel'], 'value')} are negative: {suffix}"
        hint = kb.hint("negative-counts", min=number(facts["min"]), op=self.op)
        return Finding("value-domain", found, facts, [("input", rule.tensor)], hint)


_BINCOUNT = BincountCheck()

_NAMES = ("input", "weights", "minlength")
PATCHES = [
    ("torch", "bincount", _BINCOUNT, _NAMES),
    ("torch.Tensor", "bincount", _BINCOUNT, _NAMES),
]
