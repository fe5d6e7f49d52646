"""torch.poisson: non-negative rates.

What: every rate is >= 0 (NaN fails).
Why: the CPU kernel refuses others ("invalid Poisson rate, expected rate to be
non-negative", Distributions.cpp); the CUDA sampler takes them unchecked.
Example: `torch.poisson(model(x))` on a linear output that goes below 0.
Fix: make the rates non-negative where they are made (`softplus`, `exp`).
"""

from ._common import NonNegativeCheck

_POISSON = NonNegativeCheck("poisson", "input", "rate")

PATCHES = [
    ("torch", "poisson", _POISSON, ("input", "generator")),
]
