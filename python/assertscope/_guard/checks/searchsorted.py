"""torch.searchsorted / torch.bucketize with a sorter: sorter indices in range.

What: every entry of `sorter` is an index into the last dimension of the sorted sequence.
Why: the CPU kernel refuses others ("torch.searchsorted(): sorter index out of range",
Bucketization.cpp); the CUDA kernel reads through them unchecked. searchsorted never checks
that the sequence is sorted (an unsorted one gives wrong positions, not an error), so the
guard does not check it either.
Example: `torch.searchsorted(edges, x, sorter=order + 1)`.
Fix: pass `torch.argsort(sorted_sequence)` as it is.
"""

from ... import kb
from ...errors import Finding
from .._analysis import interval, plural, range_report
from .._call import Check
from .._rules import RangeRule
from ._common import is_index_tensor


class SearchsortedCheck(Check):
    op = "searchsorted"
    cause = "index-out-of-bounds"

    def bound(self, call):
        sequence = call.get("sorted_sequence")
        return sequence.shape[-1] if hasattr(sequence, "shape") and sequence.dim() else None

    def rules(self, call):
        sorter = call.get("sorter")
        bound = self.bound(call)
        if not is_index_tensor(sorter) or sorter.numel() == 0 or bound is None:
            return []
        return [RangeRule("sorter", sorter, 0, bound)]

    def explain(self, call, rule):
        bound = self.bound(call)
        suffix, facts = range_report(rule.tensor, 0, bound)
        found = (
            f"{facts['bad_count']} of {facts['numel']} sorter {plural(facts['numel'], 'index')} outside "
            f"{interval(0, bound)} (the sorted sequence has {bound} entries): {suffix}"
        )
        hint = kb.hint("sorter-not-argsort", bound=bound)
        tensors = [("sorter", rule.tensor), ("sorted_sequence", call.get("sorted_sequence"))]
        return Finding(self.cause, found, facts, tensors, hint)


_SEARCHSORTED = SearchsortedCheck()

PATCHES = [
    ("torch", "searchsorted", _SEARCHSORTED, ("sorted_sequence", "input", "out_int32", "right", "side", "out", "sorter")),
]
