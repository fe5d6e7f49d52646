"""The guard keeps PyTorch's exception contract: where PyTorch raises for an input, the
guarded call raises an instance of the same type, and where PyTorch refuses a call on the
host (a shape, a dtype, a None, overlapping memory) its own error and message come first.
Every expectation is taken from PyTorch itself, by running the same call unguarded."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import assertscope
from assertscope import GuardError

from conftest import check_point
from op_cases import CASES

MODES = ["auto", "sync", "async"]


def pytorch_error(make):
    """The exception PyTorch raises for `make()` unguarded, or None."""
    try:
        make()
    except Exception as error:  # noqa: BLE001 - whatever PyTorch raises is the expectation
        return error
    return None


def guarded_error(make, mode):
    """The exception `make()` raises under the guard (at the call or the next check point)."""
    try:
        with assertscope.guard(mode=mode):
            make()
            check_point()
    except Exception as error:  # noqa: BLE001
        return error
    return None


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", [c for c in CASES if c.cpu_raises], ids=repr)
def test_a_guard_error_is_an_instance_of_the_type_pytorch_raises(case, mode):
    expected = pytorch_error(case.bad)
    assert expected is not None
    got = guarded_error(case.bad, mode)
    assert isinstance(got, GuardError), got
    assert isinstance(got, type(expected)), f"PyTorch raises {type(expected).__name__}, the guard {type(got).__mro__}"


def test_except_index_error_still_catches_a_bad_embedding_id():
    table = nn.Embedding(4, 2)
    with assertscope.guard(mode="sync"):
        try:
            table(torch.tensor([4]))
        except IndexError as error:
            caught = error
    assert isinstance(caught, GuardError) and caught.cause == "embedding-index-out-of-range"


# Calls PyTorch refuses on the host, whose indices or targets are out of range as well.
HOST_REFUSALS = {
    "gather: index of another rank": lambda: torch.gather(torch.randn(3, 4), 1, torch.tensor([7])),
    "index_select: 2-D index": lambda: torch.index_select(torch.randn(3, 4), 0, torch.tensor([[7]])),
    "index_put_: None among the indices": lambda: torch.zeros(3, 4).index_put_((torch.tensor([5]), None), torch.tensor(1.0)),
    "embedding: float weight, 1-D": lambda: F.embedding(torch.tensor([9]), torch.randn(4)),
    "scatter_: index overlaps self": lambda: (lambda p: p.scatter_(0, p, torch.ones_like(p)))(torch.tensor([[0, 1], [1, 5]])),
    "index_add_: source of the wrong length": lambda: torch.zeros(3, 2).index_add_(0, torch.tensor([0, 9]), torch.ones(3, 2)),
    "x[idx] = v: values that do not broadcast": lambda: torch.zeros(3, 2).__setitem__(torch.tensor([0, 9]), torch.ones(3, 3)),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(HOST_REFUSALS))
def test_pytorch_refusing_the_call_itself_goes_first(name, mode):
    make = HOST_REFUSALS[name]
    expected = pytorch_error(make)
    assert expected is not None
    got = guarded_error(make, mode)
    assert type(got) is type(expected) and str(got) == str(expected)


# Calls PyTorch refuses on the host for the very problem a guard cause names (whatever else
# is wrong with their values, here an out-of-range 7): PyTorch's message, then the cause.
TARGET_PROBLEMS = {
    "cross_entropy: [N, 1] target": (
        lambda: F.cross_entropy(torch.randn(4, 3), torch.tensor([[7], [1], [1], [0]])),
        "target-shape",
        "class-index targets must have shape [N]",
    ),
    "cross_entropy: batch sizes differ": (
        lambda: F.cross_entropy(torch.randn(4, 3), torch.tensor([7, 1, 1])),
        "batch-size-mismatch",
        "batch size",
    ),
    "nll_loss: float target": (
        lambda: F.nll_loss(torch.randn(4, 3), torch.tensor([7.0, 1, 1, 0])),
        "target-dtype",
        "float",
    ),
}


def keeps_pytorchs_message(got, expected):
    """The report starts with its headline and keeps PyTorch's own message word for word,
    as its `= pytorch:` line."""
    said = [e["text"] for e in got.diagnosis["evidence"] if e["kind"] == "pytorch"]
    return str(got).startswith("error[") and said == [f"{type(expected).__name__}: {expected}"] and " = pytorch: " in str(got)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(TARGET_PROBLEMS))
def test_a_target_problem_pytorch_refuses_is_its_message_then_the_explanation(name, mode):
    make, cause, words = TARGET_PROBLEMS[name]
    expected = pytorch_error(make)
    got = guarded_error(make, mode)
    assert isinstance(got, GuardError) and isinstance(got, type(expected))
    assert got.cause == cause
    assert keeps_pytorchs_message(got, expected), str(got)
    assert words in str(got)


def test_a_pytorch_refusal_leaves_nothing_pending_in_async_mode():
    with assertscope.guard(mode="async"):
        with pytest.raises(RuntimeError, match="same number of dimensions"):
            torch.gather(torch.randn(3, 4), 1, torch.tensor([7]))
        check_point()  # the out-of-range 7 of the refused call is not reported here
        torch.gather(torch.randn(3, 4), 1, torch.tensor([[1]]))
        check_point()


def test_an_index_sharing_memory_with_the_output_keeps_pytorchs_overlap_check():
    p = torch.tensor([[0, 1], [1, 0]])
    expected = pytorch_error(lambda: p.clone().scatter_(0, p.clone(), torch.ones_like(p)))
    assert expected is None  # without the overlap, PyTorch takes it
    for mode in MODES:
        q = p.clone()
        got = guarded_error(lambda: q.scatter_(0, q, torch.ones_like(q)), mode)
        assert type(got) is RuntimeError and "refer to a single memory location" in str(got)
        assert torch.equal(q, p)


@pytest.mark.parametrize("mode", MODES)
def test_an_inference_tensor_outside_inference_mode_is_refused_as_unguarded(mode):
    table = nn.Embedding(5, 3)
    with torch.inference_mode():
        ids = torch.tensor([1, 2])
    expected = pytorch_error(lambda: table(ids))
    assert expected is not None
    got = guarded_error(lambda: table(ids), mode)
    assert type(got) is type(expected) and str(got) == str(expected)


def test_the_error_crosses_processes_and_shows_as_a_guard_error():
    import pickle
    import traceback

    with assertscope.guard(mode="sync"):
        with pytest.raises(IndexError) as info:
            F.embedding(torch.tensor([5]), torch.randn(3, 2))
    error = info.value
    shown = "".join(traceback.format_exception_only(type(error), error))
    # Printed as assertscope.GuardError with the report's first line (it read
    # "assertscope.GuardError.IndexError: index out of range in self").
    assert shown.startswith(
        "assertscope.GuardError: error[embedding-index-out-of-range]: id past the end of the embedding table in embedding\n"
    ), shown
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error) is assertscope.GuardError.IndexError
    assert copy.cause == error.cause and copy.diagnosis == error.diagnosis


@pytest.mark.parametrize("mode", MODES)
def test_an_expanded_index_is_checked_over_its_distinct_entries(mode):
    rows = torch.tensor([0, 2, 1])
    clean = lambda ids: torch.zeros(3, 4).scatter_add_(0, ids.unsqueeze(1).expand(-1, 4), torch.ones(3, 4))  # noqa: E731
    expected = clean(rows)
    with assertscope.guard(mode=mode):
        assert torch.equal(clean(rows), expected)
        check_point()
    got = guarded_error(lambda: clean(torch.tensor([0, 3, 1])), mode)
    assert isinstance(got, GuardError) and got.values["bad_values"][0] == 3


# In-place ops whose CPU kernel writes the entries before the bad one, then raises.
PARTLY_WRITTEN = {
    "index_add_": lambda x: x.index_add_(0, torch.tensor([0, 5]), torch.ones(2)),
    "index_copy_": lambda x: x.index_copy_(0, torch.tensor([0, 5]), torch.ones(2)),
    "index_fill_": lambda x: x.index_fill_(0, torch.tensor([0, 5]), 1.0),
    "scatter_add_": lambda x: x.scatter_add_(0, torch.tensor([0, 5]), torch.ones(2)),
    "put_": lambda x: x.put_(torch.tensor([0, 5]), torch.ones(2)),
    "index_put_": lambda x: x.index_put_((torch.tensor([0, 5]),), torch.ones(2)),
    "x[idx] = v": lambda x: x.__setitem__(torch.tensor([0, 5]), 1.0),
    "masked_scatter_": lambda x: x.masked_scatter_(torch.tensor([True, True, True]), torch.ones(2)),
}


@pytest.mark.parametrize("name", list(PARTLY_WRITTEN))
def test_on_the_cpu_the_default_mode_leaves_every_tensor_as_pytorch_leaves_it(name):
    write = PARTLY_WRITTEN[name]
    unguarded = torch.zeros(3)
    expected = pytorch_error(lambda: write(unguarded))
    assert expected is not None
    guarded = torch.zeros(3)
    got = guarded_error(lambda: write(guarded), "auto")
    assert isinstance(got, GuardError) and isinstance(got, type(expected))
    assert keeps_pytorchs_message(got, expected), str(got)
    assert torch.equal(guarded, unguarded), f"unguarded {unguarded.tolist()}, guarded {guarded.tolist()}"


def test_on_the_cpu_the_default_mode_reads_no_index_before_the_op(monkeypatch):
    reads = []
    for name in ("aminmax", "amin", "amax", "min", "max", "any", "all"):
        original = getattr(torch, name)
        monkeypatch.setattr(torch, name, lambda *a, _f=original, **k: reads.append(a) or _f(*a, **k))
    table, ids, logits, labels = nn.Embedding(10, 4), torch.tensor([1, 9]), torch.randn(2, 5), torch.tensor([0, 4])
    with assertscope.guard():
        table(ids), F.cross_entropy(logits, labels), table.weight[ids], torch.zeros(10).index_add_(0, ids, torch.ones(2))
    assert reads == []
    with assertscope.guard(mode="sync"):
        table(ids)
    assert reads, "the sync mode reads the ids before the op"


# Variants of the op cases whose bad value the default mode leaves to PyTorch's CPU kernel:
# each must be refused by it, and explained as the guard's own finding.
LEFT_TO_THE_CPU_KERNEL = {
    "nll_loss, reduction none": lambda: F.nll_loss(torch.randn(2, 3), torch.tensor([0, 3]), reduction="none"),
    "nll_loss, weight": lambda: F.nll_loss(torch.randn(2, 3), torch.tensor([0, 3]), weight=torch.ones(3)),
    "cross_entropy [N, C, H, W], ignore_index 255": lambda: F.cross_entropy(
        torch.randn(1, 3, 2, 2), torch.tensor([[[0, 255], [2, 30]]]), ignore_index=255
    ),
    "cross_entropy [N, C, L], label smoothing": lambda: F.cross_entropy(
        torch.randn(2, 3, 4), torch.tensor([[0, 1, 2, 3], [0, 0, 0, 0]]), label_smoothing=0.2, reduction="none"
    ),
    "multi_margin_loss, p=2, weight": lambda: F.multi_margin_loss(torch.randn(2, 3), torch.tensor([0, 3]), p=2, weight=torch.ones(3)),
    "scatter_reduce, include_self False": lambda: torch.zeros(3).scatter_reduce(0, torch.tensor([3]), torch.ones(1), "amax", include_self=False),
    "gather, sparse_grad": lambda: torch.gather(torch.zeros(3), 0, torch.tensor([3]), sparse_grad=True),
    "embedding, max_norm, negative id": lambda: F.embedding(torch.tensor([-1]), torch.randn(4, 2), max_norm=1.0),
    "x[int32 index], negative": lambda: torch.zeros(3)[torch.tensor([-4], dtype=torch.int32)],
    "x[mask, idx]": lambda: torch.zeros(3, 3)[torch.tensor([True, False, True]), torch.tensor([0, 3])],
    "embedding_bag, per_sample_weights, decreasing offsets": lambda: F.embedding_bag(
        torch.tensor([0, 1, 2]), torch.randn(4, 2), torch.tensor([0, 2, 1]), per_sample_weights=torch.ones(3), mode="sum"
    ),
    "embedding_bag, 2-D input, mode max": lambda: F.embedding_bag(torch.tensor([[0, 9]]), torch.randn(4, 2), mode="max"),
    "max_unpool3d": lambda: F.max_unpool3d(torch.randn(1, 1, 1, 1, 2), torch.tensor([[[[[0, 9]]]]]), (1, 1, 2)),
    "multinomial float64, inf, with replacement": lambda: torch.multinomial(
        torch.tensor([0.5, float("inf")], dtype=torch.float64), 1, replacement=True
    ),
    "bernoulli_ with a NaN in p": lambda: torch.zeros(2).bernoulli_(torch.tensor([0.5, float("nan")])),
    "binary_cross_entropy float64, weight": lambda: F.binary_cross_entropy(
        torch.tensor([1.5], dtype=torch.float64), torch.tensor([1.0], dtype=torch.float64), weight=torch.ones(1, dtype=torch.float64)
    ),
    "index_fill_ along dim 1": lambda: torch.zeros(3, 2).index_fill_(1, torch.tensor([2]), 1.0),
    "masked_scatter, broadcast mask": lambda: torch.zeros(2, 3).masked_scatter(torch.tensor([True, True, True]), torch.ones(5)),
}


@pytest.mark.parametrize("name", list(LEFT_TO_THE_CPU_KERNEL))
def test_what_the_default_mode_leaves_to_the_cpu_kernel_it_refuses(name):
    make = LEFT_TO_THE_CPU_KERNEL[name]
    expected = pytorch_error(make)
    assert expected is not None, "PyTorch's CPU kernel takes it: the default mode must check it first"
    got = guarded_error(make, "auto")
    assert isinstance(got, GuardError) and isinstance(got, type(expected)), got
    assert keeps_pytorchs_message(got, expected), str(got)
