"""F.max_unpool1d/2d/3d / nn.MaxUnpool*d: indices inside the output plane or volume.

What: every index lies in [0, H_out * W_out) (or T * H * W for 3-D).
Why: CUDA asserts `maxind >= 0 && maxind < outputImageSize` (MaxUnpooling.cu).
Example: indices from a max_pool of another input, or a different output_size.
Fix: pass the indices of the matching max_pool(return_indices=True) and the same output size.
"""

import math

from ... import kb
from ._common import IndexRangeCheck


class MaxUnpoolCheck(IndexRangeCheck):
    index = "indices"

    def __init__(self, op):
        self.op = op

    def limits(self, call):
        size = call.get("output_size")
        if not isinstance(size, (list, tuple)) or not all(isinstance(s, int) for s in size):
            return None
        return 0, math.prod(size)

    def what(self, call):
        size = call.get("output_size")
        return f"the {math.prod(size)} positions of an output plane of {'x'.join(map(str, size))}"

    def hint(self, call, facts, low, high, what):
        return kb.hint("max-unpool-indices")

    def tensors(self, call):
        return [("indices", call.get("indices")), ("input", call.get("input"))]


PATCHES = [
    ("torch._C._nn", "max_unpool2d", MaxUnpoolCheck("max_unpool2d"), ("input", "indices", "output_size")),
    ("torch._C._nn", "max_unpool3d", MaxUnpoolCheck("max_unpool3d"), ("input", "indices", "output_size", "stride", "padding")),
]
