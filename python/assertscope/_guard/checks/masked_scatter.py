"""masked_scatter_: the mask selects no more elements than the source holds.

Why: CUDA checks `totalElements <= srcSize` in a one-thread kernel (masked_scatter_size_check,
IndexKernel.cu) to avoid a host sync.
Example: a vision-language model whose prompt was truncated: fewer image-token slots than
image features, or the other way round.
Fix: make source.numel() >= mask.sum(); keep the image tokens when truncating prompts.
"""

import torch

from ... import kb
from ...errors import Finding
from .._call import Check
from .._state import checkable
from .._rules import MaskedScatterRule
from ._common import function_and_methods


class MaskedScatterCheck(Check):
    op = "masked_scatter_"
    cause = "index-out-of-bounds"

    def rules(self, call):
        target, mask, source = call.get("input"), call.get("mask"), call.get("source")
        if not (checkable(mask) and mask.dtype == torch.bool and isinstance(target, torch.Tensor)):
            return []
        if not isinstance(source, torch.Tensor):
            return []
        try:
            shape = torch.broadcast_shapes(target.shape, mask.shape)
        except RuntimeError:
            return []  # PyTorch reports the shapes itself
        return [MaskedScatterRule("mask", mask, shape, source.numel())]

    def explain(self, call, rule):
        selected = int(rule.selected())
        facts = {"selected": selected, "source_numel": rule.available, "bad_count": selected - rule.available}
        found = f"the mask selects {selected} elements but the source holds only {rule.available}"
        hint = kb.hint("masked-scatter-source")
        return Finding(self.cause, found, facts, [("mask", rule.tensor), ("source", call.get("source"))], hint)


_MASKED_SCATTER = MaskedScatterCheck()

PATCHES = function_and_methods("masked_scatter", _MASKED_SCATTER, ("input", "mask", "source"))
