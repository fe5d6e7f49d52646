"""torch.normal with a tensor of standard deviations: every std >= 0.

What: every entry of `std` is >= 0 (NaN fails).
Why: DistributionTemplates.h refuses the call ("normal expects all elements of std >= 0.0")
after reading the minimum back from the device.
Example: `torch.normal(mu, log_std)`, a log standard deviation passed where the standard
deviation belongs.
Fix: pass `log_std.exp()` (or a softplus of the raw output).
"""

from ._common import NonNegativeCheck

# (a float std is checked by PyTorch on the host, with its own message)
_NORMAL = NonNegativeCheck("normal", "std", "standard deviation")

PATCHES = [
    ("torch", "normal", _NORMAL, ("mean", "std", "size")),
]
