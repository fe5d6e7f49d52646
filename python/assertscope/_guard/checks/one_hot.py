"""F.one_hot: every class value is in [0, num_classes) (>= 0 when num_classes is inferred).

Why: on CUDA one_hot skips its host checks to avoid a sync and relies on the scatter kernel,
which asserts `idx_dim >= 0 && idx_dim < index_size` (ScatterGatherKernel.cu).
Example: `F.one_hot(labels, 10)` with labels up to 10, or -100 padding in the labels.
Fix: pass the real number of classes; one_hot has no ignore_index, so mask padding first.
"""

from ... import kb
from ...errors import Finding
from .._analysis import interval, plural, range_report
from .._call import Check
from .._state import checkable
from .._rules import RangeRule
from .._verified import ranges_of
from ._common import within
from .class_target import class_hint

import torch


class OneHotCheck(Check):
    op = "one_hot"
    cause = "target-out-of-range"

    def bounds(self, call):
        classes = call.get("num_classes", -1)
        if not isinstance(classes, int) or classes < -1:
            return None
        return 0, (classes if classes != -1 else None)

    def quick(self, call):
        facts = ranges_of(call.get("tensor"))
        found = self.bounds(call)
        return facts is not None and found is not None and within(facts.get(None), *found)

    def rules(self, call):
        tensor = call.get("tensor")
        found = self.bounds(call)
        if not checkable(tensor) or tensor.dtype != torch.int64 or tensor.numel() == 0 or found is None:
            return []
        return [RangeRule("tensor", tensor, *found)]

    def explain(self, call, rule):
        low, high = self.bounds(call)
        suffix, facts = range_report(rule.tensor, low, high)
        where = f"num_classes = {high}" if high is not None else "num_classes inferred from the maximum"
        found = (
            f"{facts['bad_count']} of {facts['numel']} {plural(facts['numel'], 'value')} outside "
            f"{interval(low, high)} ({where}): {suffix}"
        )
        hint = None
        if facts["min"] is not None and facts["min"] < 0:
            padding = ", ".join(str(v) for v in facts["distinct_bad_values"] if v < 0)
            hint = kb.hint("padding-without-ignore-index", op=self.op, values=padding)
        elif high is not None:
            hint = class_hint(facts, high, None, self.op, has_ignore_index=False)
        return Finding(self.cause, found, facts, [("tensor", rule.tensor)], hint)


_ONE_HOT = OneHotCheck()

PATCHES = [
    ("torch._C._nn", "one_hot", _ONE_HOT, ("tensor", "num_classes")),
    ("torch.nn.functional", "one_hot", _ONE_HOT, ("tensor", "num_classes")),
]
