"""The checks, one op family per module. Each module documents what its kernels assert,
why it matters, an example, and the fix, and lists where its wrappers go (PATCHES:
(owner, attribute, check, parameter names)); the modules of WRAPPING wrap PyTorch's own
argument checks instead."""

from . import (
    advanced_index,
    batchnorm,
    bce,
    bincount,
    class_target,
    ctc,
    embedding,
    embedding_bag,
    gather_scatter,
    histc,
    index_dim,
    masked_scatter,
    max_unpool,
    normal,
    one_hot,
    poisson,
    quantile,
    repeat_interleave,
    rnn,
    sampling,
    searchsorted,
    take_put,
)

MODULES = (
    class_target,
    one_hot,
    bce,
    embedding,
    embedding_bag,
    advanced_index,
    index_dim,
    gather_scatter,
    take_put,
    sampling,
    ctc,
    max_unpool,
    repeat_interleave,
    masked_scatter,
    histc,
    quantile,
    bincount,
    searchsorted,
    poisson,
    normal,
)

PATCHES = [patch for module in MODULES for patch in module.PATCHES]

# Checks that wrap PyTorch's own argument checks and explain what they refuse (each with
# install() and uninstall()): the recurrent state's batch size, BatchNorm's batch of one.
WRAPPING = (rnn, batchnorm)
