"""take and put_: indices into the flattened tensor, in [-numel, numel).

Why: CUDA asserts `idx < numel && idx >= -numel && "cuda_take_put_kernel() index out of
bounds"` (IndexKernel.cu).
Example: flat indices computed for a larger tensor (row * width + col with the wrong width).
Fix: compute flat indices from the real shape (`torch.ravel_multi_index`-style arithmetic).
"""

import torch

from ._common import IndexRangeCheck


class FlatIndexCheck(IndexRangeCheck):
    pytorch_error = IndexError

    def __init__(self, op):
        self.op = op

    def limits(self, call):
        target = call.get("input")
        if not isinstance(target, torch.Tensor) or target.is_meta:
            return None
        size = target.numel()
        return -size, size

    def what(self, call):
        return f"the {call.get('input').numel()} elements of the flattened input"


_TAKE = FlatIndexCheck("take")
_PUT = FlatIndexCheck("put_")

PATCHES = [
    ("torch", "take", _TAKE, ("input", "index")),
    ("torch.Tensor", "take", _TAKE, ("input", "index")),
    ("torch", "put", _PUT, ("input", "index", "source", "accumulate")),
    ("torch.Tensor", "put_", _PUT, ("input", "index", "source", "accumulate")),
    ("torch.Tensor", "put", _PUT, ("input", "index", "source", "accumulate")),
]
