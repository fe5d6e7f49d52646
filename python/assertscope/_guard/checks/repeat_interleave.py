"""repeat_interleave with output_size: repeats >= 0 that add up to output_size.

Why: output_size lets repeat_interleave skip a host sync; CUDA then asserts
`result_size == cumsum_ptr[size - 1]` (Repeat.cu).
Example: output_size computed from a different batch than the repeats.
Fix: drop output_size, or compute it from the same repeats (`int(repeats.sum())`).
"""

import torch

from ... import kb
from ...errors import Finding
from .._call import Check
from .._state import checkable
from .._rules import RepeatsRule
from ._common import is_index_tensor


class RepeatInterleaveCheck(Check):
    op = "repeat_interleave"
    cause = "index-out-of-bounds"

    def layout(self, call):
        """(repeats, count) where count is how many entries the repeats apply to, or None."""
        output_size = call.get("output_size")
        if output_size is None or not isinstance(output_size, int):
            return None
        first, repeats = call.get("input"), call.get("repeats")
        if repeats is None:  # torch.repeat_interleave(repeats, output_size=...)
            repeats, count = first, (first.numel() if isinstance(first, torch.Tensor) else 0)
        else:
            if not isinstance(first, torch.Tensor):
                return None
            dim = call.get("dim")
            if dim is None:
                count = first.numel()
            elif isinstance(dim, int) and -max(first.dim(), 1) <= dim < max(first.dim(), 1):
                count = first.shape[dim] if first.dim() else 1
            else:
                return None
        if not (is_index_tensor(repeats) and checkable(repeats)) or repeats.dim() > 1:
            return None
        if repeats.numel() not in (1, count):
            return None  # PyTorch refuses the shapes on the host
        return repeats, count, output_size

    def rules(self, call):
        found = self.layout(call)
        if found is None:
            return []
        repeats, count, output_size = found
        name = "repeats" if call.get("repeats") is not None else "input"
        return [RepeatsRule(name, repeats, count, output_size)]

    def explain(self, call, rule):
        repeats = rule.tensor
        total = int(rule.total())
        negatives = int((repeats < 0).sum())
        facts = {"sum": total, "output_size": rule.output_size, "negative_count": negatives, "min": int(repeats.min())}
        if negatives:
            found = f"{negatives} negative {'repeat' if negatives == 1 else 'repeats'} (min {facts['min']})"
            hint = kb.hint("negative-repeats")
        else:
            found = f"the repeats add up to {total}, but output_size = {rule.output_size}"
            hint = kb.hint("repeat-interleave-output-size")
        return Finding(self.cause, found, facts, [("repeats", repeats)], hint)


_REPEAT = RepeatInterleaveCheck()

PATCHES = [
    ("torch", "repeat_interleave", _REPEAT, ("input", "repeats", "dim", "output_size")),
    ("torch.Tensor", "repeat_interleave", _REPEAT, ("input", "repeats", "dim", "output_size")),
]
