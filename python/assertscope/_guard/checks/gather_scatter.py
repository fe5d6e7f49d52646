"""gather, scatter_, scatter_add_, scatter_reduce_ and take_along_dim without `dim`.

What: every index lies in [0, size) of dimension `dim` of the gathered (or scattered-into)
tensor. Negative indices are not allowed. take_along_dim with `dim` wraps indices
modulo the size and never asserts, so only its flattened form is checked.
Why: CUDA asserts `idx_dim >= 0 && idx_dim < index_size` (ScatterGatherKernel.cu) or the
vectorized gather's `ind >= 0 && ind < ind_dim_size` (IndexKernelUtils.cu).
Example: `logits.gather(1, labels.unsqueeze(1))` with -100 padding in the labels.
Fix: mask padding before gather (`labels.clamp(min=0)`) and zero those results afterwards.
"""

import torch

from ._common import IndexRangeCheck, dim_size, function_and_methods


class AlongDimCheck(IndexRangeCheck):
    def __init__(self, op, flattened_without_dim=False, index="index"):
        self.op = op
        self.index = index
        self.flattened_without_dim = flattened_without_dim

    def limits(self, call):
        target = call.get("input")
        if not isinstance(target, torch.Tensor) or target.is_meta:
            return None
        if self.flattened_without_dim:
            if call.get("dim") is not None:
                return None  # take_along_dim(..., dim) wraps every index: nothing can assert
            return 0, target.numel()
        found = dim_size(target, call.get("dim"))
        return None if found is None else (0, found[1])

    def what(self, call):
        target = call.get("input")
        if self.flattened_without_dim:
            return f"the {target.numel()} elements of the flattened input"
        dim, _ = dim_size(target, call.get("dim"))
        return f"dimension {dim} of a tensor of shape {list(target.shape)}"


_GATHER = AlongDimCheck("gather")
_SCATTER = AlongDimCheck("scatter_")
_SCATTER_ADD = AlongDimCheck("scatter_add_")
_SCATTER_REDUCE = AlongDimCheck("scatter_reduce_")
_TAKE_ALONG = AlongDimCheck("take_along_dim", flattened_without_dim=True, index="indices")

_SCATTER_NAMES = ("input", "dim", "index", "src", "reduce")
PATCHES = [
    ("torch", "gather", _GATHER, ("input", "dim", "index")),
    ("torch.Tensor", "gather", _GATHER, ("input", "dim", "index")),
    *function_and_methods("scatter", _SCATTER, _SCATTER_NAMES),
    *function_and_methods("scatter_add", _SCATTER_ADD, _SCATTER_NAMES),
    *function_and_methods("scatter_reduce", _SCATTER_REDUCE, _SCATTER_NAMES),
    ("torch", "take_along_dim", _TAKE_ALONG, ("input", "indices", "dim")),
    ("torch.Tensor", "take_along_dim", _TAKE_ALONG, ("input", "indices", "dim")),
]
