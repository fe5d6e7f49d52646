"""index_select, index_add_, index_copy_, index_fill_, index_reduce_: indices along `dim`.

What: every index lies in [0, size) of dimension `dim` of self; index_fill_ (and
index_select of a sparse tensor) also take negative indices, [-size, size).
Why: CUDA asserts `srcIndex < srcSelectDimSize`, `dstIndex < dstAddDimSize` (Indexing.cu),
`idx >= 0 && idx < self_dim_size && "index_copy_(): index out of bounds"` and
`idx >= -self_dim_size && idx < self_dim_size` (IndexKernel.cu).
Example: message passing with edge indices past the number of nodes (index_add_).
Fix: re-number ids after filtering, build the target for the right number of rows.
"""

import torch

from ._common import IndexRangeCheck, dim_size, function_and_methods


class IndexAlongDimCheck(IndexRangeCheck):
    def __init__(self, op, negatives_allowed=False, pytorch_error=IndexError):
        self.op = op
        self.negatives_allowed = negatives_allowed
        self.pytorch_error = pytorch_error

    def limits(self, call):
        target = call.get("input")
        if not isinstance(target, torch.Tensor) or target.is_meta:
            return None
        found = dim_size(target, call.get("dim"))
        if found is None:
            return None
        size = found[1]
        wraps = self.negatives_allowed or (self.op == "index_select" and target.is_sparse)
        return (-size if wraps else 0), size

    def what(self, call):
        target = call.get("input")
        dim, _ = dim_size(target, call.get("dim"))
        return f"dimension {dim} of a tensor of shape {list(target.shape)}"


_SELECT = IndexAlongDimCheck("index_select")
_ADD = IndexAlongDimCheck("index_add_", pytorch_error=RuntimeError)
_COPY = IndexAlongDimCheck("index_copy_")
_FILL = IndexAlongDimCheck("index_fill_", negatives_allowed=True)
_REDUCE = IndexAlongDimCheck("index_reduce_")

_WITH_SOURCE = ("input", "dim", "index", "source")
PATCHES = [
    ("torch", "index_select", _SELECT, ("input", "dim", "index")),
    ("torch.Tensor", "index_select", _SELECT, ("input", "dim", "index")),
    *function_and_methods("index_add", _ADD, _WITH_SOURCE),
    *function_and_methods("index_copy", _COPY, _WITH_SOURCE),
    *function_and_methods("index_fill", _FILL, ("input", "dim", "index", "value")),
    *function_and_methods("index_reduce", _REDUCE, _WITH_SOURCE + ("reduce",)),
]
