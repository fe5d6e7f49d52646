"""For every guarded op: a correct use (which must run unchanged under the guard) and a
buggy one (which a CUDA kernel would assert on). Inputs are built inside each function so
in-place ops can be run again."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Case:
    def __init__(self, name, good, bad, cause, op, cpu_raises=True, host=False):
        self.name = name
        self.good = good
        self.bad = bad
        self.cause = cause
        self.op = op
        # PyTorch's CPU kernels refuse the bad input too (else it is a silent CUDA memory bug).
        self.cpu_raises = cpu_raises
        # PyTorch refuses it on the host on every device (an empty input, a range given
        # the wrong way round): the guard explains at once, in every mode.
        self.host = host or cause == "target-shape"

    def __repr__(self):
        return self.name


def g(seed=0):
    return torch.Generator().manual_seed(seed)


def logits(n=6, c=5, seed=0):
    return torch.randn(n, c, generator=g(seed))


def x54():
    return torch.arange(20.0).view(5, 4)


def _pool2d():
    out, idx = F.max_pool2d(torch.randn(1, 2, 4, 4, generator=g()), 2, return_indices=True)
    return out, idx


def _pool1d():
    return F.max_pool1d(torch.randn(1, 2, 4, generator=g()), 2, return_indices=True)


def _pool3d():
    return F.max_pool3d(torch.randn(1, 1, 2, 4, 4, generator=g()), 2, return_indices=True)


def _ctc(targets, input_lengths, target_lengths):
    log_probs = torch.randn(12, 2, 6, generator=g()).log_softmax(2)
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths)


def _bag(ids, offsets):
    return F.embedding_bag(ids, torch.randn(6, 3, generator=g()), offsets)


def _emb():
    return nn.Embedding(10, 4, padding_idx=0)


torch.manual_seed(0)
_EMBEDDING = _emb()

CASES = [
    # --- class targets
    Case("cross_entropy",
         lambda: F.cross_entropy(logits(), torch.tensor([0, 4, -100, 2, 3, 1])),
         lambda: F.cross_entropy(logits(), torch.tensor([0, 5, 1, 2, 3, 1])),
         "target-out-of-range", "cross_entropy"),
    Case("CrossEntropyLoss module, label smoothing, reduction none",
         lambda: nn.CrossEntropyLoss(label_smoothing=0.1, reduction="none")(logits(), torch.tensor([0, 4, -100, 2, 3, 1])),
         lambda: nn.CrossEntropyLoss(label_smoothing=0.1, reduction="none")(logits(), torch.tensor([0, 4, -1, 2, 3, 1])),
         "target-out-of-range", "cross_entropy"),
    Case("cross_entropy segmentation, ignore_index=255",
         lambda: F.cross_entropy(torch.randn(2, 3, 4, 4, generator=g()), torch.full((2, 4, 4), 255).index_fill_(2, torch.tensor([0]), 2), ignore_index=255),
         lambda: F.cross_entropy(torch.randn(2, 3, 4, 4, generator=g()), torch.full((2, 4, 4), 255).index_fill_(2, torch.tensor([0]), 2)),
         "target-out-of-range", "cross_entropy"),
    Case("cross_entropy unbatched",
         lambda: F.cross_entropy(torch.randn(5, generator=g()), torch.tensor(4)),
         lambda: F.cross_entropy(torch.randn(5, generator=g()), torch.tensor(5)),
         "target-out-of-range", "cross_entropy"),
    Case("cross_entropy class probabilities / target [N, 1]",
         lambda: F.cross_entropy(logits(), torch.softmax(logits(seed=1), 1)),
         lambda: F.cross_entropy(logits(), torch.tensor([[0], [4], [1], [2], [3], [1]])),
         "target-shape", "cross_entropy"),
    Case("cross_entropy one-hot integer target",
         lambda: F.cross_entropy(logits(), F.one_hot(torch.tensor([0, 4, 1, 2, 3, 1]), 5).float()),
         lambda: F.cross_entropy(logits(), F.one_hot(torch.tensor([0, 4, 1, 2, 3, 1]), 5)),
         "target-shape", "cross_entropy"),
    Case("nll_loss uint8 targets",
         lambda: F.nll_loss(logits().log_softmax(1), torch.tensor([0, 4, 1, 2, 3, 1], dtype=torch.uint8)),
         lambda: F.nll_loss(logits().log_softmax(1), torch.tensor([0, 5, 1, 2, 3, 1], dtype=torch.uint8)),
         "target-out-of-range", "nll_loss"),
    Case("NLLLoss sequence [N, C, L]",
         lambda: nn.NLLLoss(ignore_index=-1)(torch.randn(2, 5, 7, generator=g()).log_softmax(1), torch.tensor([[0, 1, 2, 3, 4, -1, -1]] * 2)),
         lambda: nn.NLLLoss()(torch.randn(2, 5, 7, generator=g()).log_softmax(1), torch.tensor([[0, 1, 2, 3, 4, -1, -1]] * 2)),
         "target-out-of-range", "nll_loss"),
    Case("multi_margin_loss",
         lambda: F.multi_margin_loss(logits(), torch.tensor([0, 4, 1, 2, 3, 1])),
         lambda: F.multi_margin_loss(logits(), torch.tensor([0, 4, 1, 2, 3, 5])),
         "target-out-of-range", "multi_margin_loss"),
    Case("multilabel_margin_loss",
         lambda: F.multilabel_margin_loss(logits(2), torch.tensor([[0, 2, -1, 1, 1], [1, -1, 0, 0, 0]])),
         lambda: F.multilabel_margin_loss(logits(2), torch.tensor([[0, 5, -1, 1, 1], [1, -1, 0, 0, 0]])),
         "target-out-of-range", "multilabel_margin_loss"),
    Case("one_hot",
         lambda: F.one_hot(torch.tensor([0, 2, 1]), 3),
         lambda: F.one_hot(torch.tensor([0, 3, 1]), 3),
         "target-out-of-range", "one_hot"),
    Case("one_hot inferred num_classes",
         lambda: F.one_hot(torch.tensor([0, 7, 1])),
         lambda: F.one_hot(torch.tensor([0, -100, 1])),
         "target-out-of-range", "one_hot"),
    # --- binary cross entropy
    Case("binary_cross_entropy input",
         lambda: F.binary_cross_entropy(torch.tensor([0.0, 0.3, 1.0]), torch.tensor([0.0, 0.5, 1.0])),
         lambda: F.binary_cross_entropy(torch.tensor([-1.2, 0.3, 2.5]), torch.tensor([0.0, 0.5, 1.0])),
         "bce-input-range", "binary_cross_entropy"),
    Case("BCELoss target",
         lambda: nn.BCELoss()(torch.tensor([0.2, 0.3]), torch.tensor([0.0, 1.0])),
         lambda: nn.BCELoss()(torch.tensor([0.2, 0.3]), torch.tensor([-1.0, 1.0])),
         "bce-input-range", "binary_cross_entropy"),
    Case("binary_cross_entropy NaN input",
         lambda: F.binary_cross_entropy(torch.tensor([0.2, 0.3]), torch.tensor([0.0, 1.0])),
         lambda: F.binary_cross_entropy(torch.tensor([float("nan"), 0.3]), torch.tensor([0.0, 1.0])),
         "nan-inf", "binary_cross_entropy"),
    # --- embeddings
    Case("nn.Embedding",
         lambda: _EMBEDDING(torch.tensor([[0, 9, 3]])),
         lambda: _EMBEDDING(torch.tensor([[0, 10, 3]])),
         "embedding-index-out-of-range", "embedding"),
    Case("F.embedding negative id",
         lambda: F.embedding(torch.tensor([1, 2]), torch.randn(4, 2, generator=g())),
         lambda: F.embedding(torch.tensor([1, -1]), torch.randn(4, 2, generator=g())),
         "embedding-index-out-of-range", "embedding"),
    Case("F.embedding max_norm",
         lambda: F.embedding(torch.tensor([1, 3]), torch.randn(4, 2, generator=g()), max_norm=1.0),
         lambda: F.embedding(torch.tensor([1, 4]), torch.randn(4, 2, generator=g()), max_norm=1.0),
         "embedding-index-out-of-range", "embedding"),
    Case("embedding_bag ids",
         lambda: _bag(torch.tensor([0, 5, 2]), torch.tensor([0, 2])),
         lambda: _bag(torch.tensor([0, 6, 2]), torch.tensor([0, 2])),
         "embedding-index-out-of-range", "embedding_bag"),
    Case("embedding_bag offsets",
         lambda: _bag(torch.tensor([0, 5, 2]), torch.tensor([0, 0, 3])),
         lambda: _bag(torch.tensor([0, 5, 2]), torch.tensor([1, 2])),
         "embedding-index-out-of-range", "embedding_bag"),
    Case("embedding_bag offsets that decrease, mode max",
         lambda: F.embedding_bag(torch.tensor([0, 5, 2]), torch.randn(6, 3, generator=g()), torch.tensor([0, 1, 1]), mode="max"),
         lambda: F.embedding_bag(torch.tensor([0, 5, 2]), torch.randn(6, 3, generator=g()), torch.tensor([0, 2, 1]), mode="max"),
         "embedding-index-out-of-range", "embedding_bag", cpu_raises=False),
    Case("EmbeddingBag 2-D input",
         lambda: nn.EmbeddingBag(6, 3)(torch.tensor([[0, 5], [2, 3]])),
         lambda: nn.EmbeddingBag(6, 3)(torch.tensor([[0, 5], [2, 6]])),
         "embedding-index-out-of-range", "embedding_bag"),
    # --- advanced indexing
    Case("x[idx] with negative indices",
         lambda: x54()[torch.tensor([-5, 4, 0])],
         lambda: x54()[torch.tensor([-6, 4, 0])],
         "index-out-of-bounds", "index"),
    Case("x[:, idx]",
         lambda: x54()[:, torch.tensor([[3, -4]])],
         lambda: x54()[:, torch.tensor([[4, 0]])],
         "index-out-of-bounds", "index"),
    Case("x[..., idx] and x[mask, idx]",
         lambda: (x54()[..., torch.tensor([3])], x54()[torch.tensor([True, False, True, False, True]), torch.tensor([3])]),
         lambda: x54()[torch.tensor([True, False, True, False, True]), torch.tensor([4])],
         "index-out-of-bounds", "index"),
    Case("x[list]",
         lambda: x54()[[0, 4, -5]],
         lambda: x54()[[0, 5]],
         "index-out-of-bounds", "index"),
    Case("x[[rows, cols]] read as a tuple",
         lambda: x54()[[torch.tensor([0, 4]), torch.tensor([3, 0])]],
         lambda: x54()[[torch.tensor([0, 4]), torch.tensor([4, 0])]],
         "index-out-of-bounds", "index"),
    Case("x[idx] = v",
         lambda: x54().__setitem__(torch.tensor([4, -1]), 7.0),
         lambda: x54().__setitem__(torch.tensor([5]), 7.0),
         "index-out-of-bounds", "index"),
    Case("index_put_ accumulate",
         lambda: x54().index_put_((torch.tensor([4, 4]), torch.tensor([0, 3])), torch.tensor(1.0), accumulate=True),
         lambda: x54().index_put_((torch.tensor([4, 4]), torch.tensor([0, 4])), torch.tensor(1.0), accumulate=True),
         "index-out-of-bounds", "index_put_"),
    Case("torch.index_put",
         lambda: torch.index_put(x54(), (torch.tensor([4]),), torch.tensor(1.0)),
         lambda: torch.index_put(x54(), (torch.tensor([-6]),), torch.tensor(1.0)),
         "index-out-of-bounds", "index_put_"),
    # --- indices along a dimension
    Case("index_select",
         lambda: x54().index_select(0, torch.tensor([4, 0])),
         lambda: torch.index_select(x54(), 0, torch.tensor([-1])),
         "index-out-of-bounds", "index_select"),
    Case("index_add_",
         lambda: torch.zeros(3, 2).index_add_(0, torch.tensor([0, 2, 2]), torch.ones(3, 2)),
         lambda: torch.zeros(3, 2).index_add_(0, torch.tensor([0, 3, 2]), torch.ones(3, 2)),
         "index-out-of-bounds", "index_add_"),
    Case("index_copy_",
         lambda: torch.zeros(3, 2).index_copy_(1, torch.tensor([1]), torch.ones(3, 1)),
         lambda: torch.zeros(3, 2).index_copy_(1, torch.tensor([-1]), torch.ones(3, 1)),
         "index-out-of-bounds", "index_copy_"),
    Case("index_fill_ with negative index",
         lambda: torch.zeros(3, 2).index_fill_(0, torch.tensor([-3, 2]), 1.0),
         lambda: torch.zeros(3, 2).index_fill_(0, torch.tensor([-4]), 1.0),
         "index-out-of-bounds", "index_fill_"),
    Case("index_reduce_",
         lambda: torch.ones(3, 2).index_reduce_(0, torch.tensor([2, 0]), torch.full((2, 2), 2.0), "prod"),
         lambda: torch.ones(3, 2).index_reduce_(0, torch.tensor([2, 3]), torch.full((2, 2), 2.0), "prod"),
         "index-out-of-bounds", "index_reduce_"),
    # --- gather / scatter
    Case("gather",
         lambda: logits().gather(1, torch.tensor([[4], [0], [1], [2], [3], [1]])),
         lambda: logits().gather(1, torch.tensor([[4], [0], [-100], [2], [3], [1]])),
         "index-out-of-bounds", "gather"),
    Case("torch.gather on a 0-dim tensor",
         lambda: torch.gather(torch.tensor(3.0), 0, torch.tensor(0)),
         lambda: torch.gather(torch.tensor(3.0), 0, torch.tensor(1)),
         "index-out-of-bounds", "gather"),
    Case("scatter_ value",
         lambda: torch.zeros(2, 4).scatter_(1, torch.tensor([[3], [0]]), 1.0),
         lambda: torch.zeros(2, 4).scatter_(1, torch.tensor([[4], [0]]), 1.0),
         "index-out-of-bounds", "scatter_"),
    Case("scatter_add_",
         lambda: torch.zeros(3).scatter_add_(0, torch.tensor([0, 2, 2]), torch.ones(3)),
         lambda: torch.zeros(3).scatter_add_(0, torch.tensor([0, -1, 2]), torch.ones(3)),
         "index-out-of-bounds", "scatter_add_"),
    Case("scatter_reduce",
         lambda: torch.zeros(3).scatter_reduce(0, torch.tensor([0, 2]), torch.ones(2), "amax"),
         lambda: torch.scatter_reduce(torch.zeros(3), 0, torch.tensor([0, 3]), torch.ones(2), "amax"),
         "index-out-of-bounds", "scatter_reduce_"),
    Case("take_along_dim (with dim it wraps any index; without, it does not)",
         lambda: (torch.take_along_dim(x54(), torch.tensor([[100, -7, 2, 0]]), 0), torch.take_along_dim(x54(), torch.tensor([19]))),
         lambda: torch.take_along_dim(x54(), torch.tensor([20])),
         "index-out-of-bounds", "take_along_dim"),
    Case("take",
         lambda: x54().take(torch.tensor([-20, 19])),
         lambda: torch.take(x54(), torch.tensor([-21])),
         "index-out-of-bounds", "take"),
    Case("put_",
         lambda: x54().put_(torch.tensor([-20, 19]), torch.tensor([1.0, 2.0]), accumulate=True),
         lambda: x54().put_(torch.tensor([20]), torch.tensor([1.0])),
         "index-out-of-bounds", "put_"),
    # --- sampling
    Case("multinomial",
         lambda: torch.multinomial(torch.tensor([[0.2, 0.8, 0.0], [1.0, 1.0, 1.0]]), 2, generator=g()),
         lambda: torch.multinomial(torch.tensor([[0.2, float("nan"), 0.0], [1.0, 1.0, 1.0]]), 1, generator=g()),
         "invalid-probabilities", "multinomial"),
    Case("multinomial zero row, with replacement",
         lambda: torch.tensor([[0.2, 0.8]]).multinomial(3, replacement=True, generator=g()),
         lambda: torch.tensor([[0.0, 0.0], [0.5, 0.5]]).multinomial(3, replacement=True, generator=g()),
         "invalid-probabilities", "multinomial"),
    Case("Categorical.sample with negative probabilities",
         lambda: torch.distributions.Categorical(probs=torch.tensor([0.3, 0.7])).sample(),
         lambda: torch.distributions.Categorical(probs=torch.tensor([-0.3, 1.3]), validate_args=False).sample(),
         "invalid-probabilities", "multinomial"),
    Case("bernoulli",
         lambda: (torch.bernoulli(torch.tensor([0.0, 0.5, 1.0]), generator=g()), torch.bernoulli(torch.tensor([3.0]), p=0.5, generator=g())),
         lambda: torch.bernoulli(torch.tensor([0.0, 1.5]), generator=g()),
         "invalid-probabilities", "bernoulli"),
    Case("bernoulli_ with a tensor p",
         lambda: torch.zeros(2).bernoulli_(torch.tensor([0.2, 1.0]), generator=g()),
         lambda: torch.zeros(2).bernoulli_(torch.tensor([0.2, float("nan")]), generator=g()),
         "invalid-probabilities", "bernoulli"),
    # --- CTC
    Case("ctc_loss input_lengths",
         lambda: _ctc(torch.tensor([[1, 2, 3, -1], [5, 5, 1, 2]]), torch.tensor([12, 9]), torch.tensor([3, 4])),
         lambda: _ctc(torch.tensor([[1, 2, 3, 4], [5, 5, 1, 2]]), torch.tensor([13, 9]), torch.tensor([3, 4])),
         "ctc-loss", "ctc_loss"),
    Case("ctc_loss target ids",
         lambda: _ctc(torch.tensor([1, 2, 3, 5, 5]), (12, 9), (3, 2)),
         lambda: _ctc(torch.tensor([[1, 2, 6, -1], [5, 5, 1, 2]]), (12, 9), (3, 4)),
         "ctc-loss", "ctc_loss", cpu_raises=False),
    Case("ctc_loss concatenated target lengths",
         lambda: _ctc(torch.tensor([1, 2, 3, 5, 5]), torch.tensor([12, 9]), torch.tensor([3, 2])),
         lambda: _ctc(torch.tensor([1, 2, 3, 5, 5]), torch.tensor([12, 9]), torch.tensor([3, 3])),
         "ctc-loss", "ctc_loss"),
    # --- max_unpool
    Case("max_unpool2d",
         lambda: F.max_unpool2d(*_pool2d(), 2),
         lambda: F.max_unpool2d(_pool2d()[0], torch.full((1, 2, 2, 2), 16), 2),
         "index-out-of-bounds", "max_unpool2d"),
    Case("MaxUnpool1d",
         lambda: nn.MaxUnpool1d(2)(*_pool1d()),
         lambda: nn.MaxUnpool1d(2)(_pool1d()[0], torch.full((1, 2, 2), -1)),
         "index-out-of-bounds", "max_unpool2d"),
    Case("max_unpool3d",
         lambda: F.max_unpool3d(*_pool3d(), 2),
         lambda: F.max_unpool3d(_pool3d()[0], torch.full((1, 1, 1, 2, 2), 32), 2),
         "index-out-of-bounds", "max_unpool3d"),
    # --- repeat_interleave, masked_scatter
    Case("repeat_interleave output_size",
         lambda: (torch.tensor([1, 2]).repeat_interleave(torch.tensor([2, 1]), output_size=3), torch.repeat_interleave(torch.tensor([2]), output_size=2)),
         lambda: torch.repeat_interleave(torch.tensor([1, 2]), torch.tensor([2, 1]), output_size=4),
         "index-out-of-bounds", "repeat_interleave"),
    Case("masked_scatter_",
         lambda: torch.zeros(2, 2).masked_scatter_(torch.tensor([True, False]), torch.ones(2)),
         lambda: torch.zeros(3, 2).masked_scatter_(torch.tensor([True, False]), torch.ones(2)),
         "index-out-of-bounds", "masked_scatter_"),
    # --- value checks: histograms, quantiles, counts, searches, rates
    Case("histc NaN input, range from the data",
         lambda: torch.histc(torch.tensor([0.5, 1.0, 2.0]), bins=4),
         lambda: torch.histc(torch.tensor([0.5, float("nan"), 2.0]), bins=4),
         "nan-inf", "histc"),
    Case("Tensor.histc inf input",
         lambda: torch.tensor([0.5, float("nan"), 2.0]).histc(bins=4, min=0, max=3),
         lambda: torch.tensor([0.5, float("inf"), 2.0]).histc(bins=4),
         "nan-inf", "histc"),
    Case("histc min > max",
         lambda: torch.histc(torch.tensor([0.5, 1.0, 2.0]), bins=4, min=0, max=3),
         lambda: torch.histc(torch.tensor([0.5, 1.0, 2.0]), bins=4, min=3, max=0),
         "value-domain", "histc", host=True),
    Case("quantile of an empty selection",
         lambda: torch.quantile(torch.tensor([0.1, 0.9, 0.4]), 0.5),
         lambda: torch.quantile(torch.tensor([0.1, 0.9, 0.4])[torch.tensor([False, False, False])], 0.5),
         "empty-tensor", "quantile", host=True),
    Case("quantile q tensor in percent",
         lambda: torch.quantile(torch.tensor([0.1, 0.9, 0.4]), torch.tensor([0.5, 0.95])),
         lambda: torch.quantile(torch.tensor([0.1, 0.9, 0.4]), torch.tensor([50.0, 95.0])),
         "value-domain", "quantile"),
    Case("nanquantile q float out of range",
         lambda: torch.tensor([0.1, float("nan"), 0.4]).nanquantile(0.25),
         lambda: torch.tensor([0.1, float("nan"), 0.4]).nanquantile(1.5),
         "value-domain", "nanquantile", host=True),
    Case("bincount negative value",
         lambda: torch.bincount(torch.tensor([0, 2, 2, 5])),
         lambda: torch.bincount(torch.tensor([0, 2, -1, 5])),
         "value-domain", "bincount"),
    Case("bincount weights of another length",
         lambda: torch.tensor([0, 2, 2]).bincount(weights=torch.tensor([0.5, 1.0, 2.0])),
         lambda: torch.tensor([0, 2, 2]).bincount(weights=torch.tensor([0.5, 1.0])),
         "value-domain", "bincount", host=True),
    Case("searchsorted sorter out of range",
         lambda: torch.searchsorted(torch.tensor([3.0, 1.0, 2.0]), torch.tensor([1.5, 2.5]), sorter=torch.tensor([1, 2, 0])),
         lambda: torch.searchsorted(torch.tensor([3.0, 1.0, 2.0]), torch.tensor([1.5, 2.5]), sorter=torch.tensor([2, 3, 1])),
         "index-out-of-bounds", "searchsorted"),
    Case("poisson negative rate",
         lambda: torch.poisson(torch.tensor([0.0, 1.5, 4.0]), generator=g()),
         lambda: torch.poisson(torch.tensor([0.5, -1.5, 4.0]), generator=g()),
         "value-domain", "poisson"),
    Case("normal negative std tensor",
         lambda: torch.normal(torch.zeros(3), torch.tensor([0.0, 1.0, 2.0]), generator=g()),
         lambda: torch.normal(torch.zeros(3), torch.tensor([0.5, -1.0, 2.0]), generator=g()),
         "value-domain", "normal"),
    Case("normal NaN std with a float mean",
         lambda: torch.normal(0.0, torch.tensor([1.0, 2.0]), generator=g()),
         lambda: torch.normal(0.0, torch.tensor([1.0, float("nan")]), generator=g()),
         "value-domain", "normal"),
]
