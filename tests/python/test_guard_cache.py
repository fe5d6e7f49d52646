"""The guard's memory of index ranges (_verified): a tensor reused unchanged is not read
again, and no way of changing it afterwards lets a bad value through.

The memory serves the modes that read index tensors before the op: "sync" and "async"
(CUDA's default). In the default mode on the CPU no index is read before the op (PyTorch's
CPU kernels check them), so the tests that count reads use mode="sync", which runs on the
CPU as on CUDA."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import assertscope
from assertscope import GuardError
from conftest import check_point

TABLE = torch.randn(10, 4)

# Each op family reads its index with the same rule; one op per family that uses a fast path.
OPS = {
    "index_select": lambda idx: TABLE.index_select(0, idx),
    "embedding": lambda idx: F.embedding(idx, TABLE),
    "x[idx]": lambda idx: TABLE[idx],
    "gather": lambda idx: TABLE.gather(0, idx.unsqueeze(1).expand(-1, 4)),
    "index_put_": lambda idx: torch.zeros(10, 4).index_put_((idx,), torch.ones(idx.shape[0], 4), accumulate=True),
    "cross_entropy": lambda idx: F.cross_entropy(torch.randn(idx.shape[0], 10), idx),
}


@pytest.fixture
def reads(monkeypatch):
    """Counts the reductions the guard runs on index tensors (each is one device read)."""
    count = [0]
    original = torch.aminmax

    def counting(*args, **kwargs):
        count[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(torch, "aminmax", counting)
    return count


def run_guarded(op, idx, mode):
    """The op under the guard in `mode`; the asynchronous verdict is collected at once."""
    result = OPS[op](idx)
    if mode == "async":
        check_point()
    return result


@pytest.mark.parametrize("op", OPS)
def test_a_reused_tensor_is_read_once_and_again_after_a_change(op, reads):
    idx = torch.tensor([1, 2, 3])
    with assertscope.guard(mode="sync"):
        OPS[op](idx)
        first = reads[0]
        assert first >= 1
        OPS[op](idx)
        OPS[op](idx)
        assert reads[0] == first  # nothing read for the unchanged tensor
        idx.add_(1)  # still in range, but changed: read again
        OPS[op](idx)
        assert reads[0] > first


def test_views_of_one_buffer_share_what_was_read(reads):
    edges = torch.tensor([[0, 1, 2, 3], [4, 5, 6, 7]])
    with assertscope.guard(mode="sync"):
        TABLE.index_select(0, edges[0])
        first = reads[0]
        for _ in range(3):  # a new view object every layer, as a GNN makes them
            TABLE.index_select(0, edges[0])
            torch.zeros(10, 4).index_add_(0, edges[1], torch.ones(4, 4))
        assert reads[0] == first + 1  # edges[1] once; edges[0] never again
        edges[1, 0] = 9  # a write through another view of the same buffer
        torch.zeros(10, 4).index_add_(0, edges[1], torch.ones(4, 4))
        assert reads[0] == first + 2


def _in_place(idx):
    idx[0] = 99


def _through_a_view(idx):
    idx.view(-1)[:2][0] = 99


def _through_data(idx):
    idx.data[0] = 99  # `.data` has a version counter of its own


def _through_numpy(idx):
    idx.numpy()[0] = 99  # numpy writes bump no version counter


def _through_an_earlier_numpy_view(idx, view):
    view[0] = 99


def _under_inference_mode(idx):
    with torch.inference_mode():
        idx[0] = 99


def _under_no_grad(idx):
    with torch.no_grad():
        idx.copy_(torch.tensor([99, 1, 2]))


def _data_replaced(idx):
    idx.data = torch.tensor([99, 1, 2])  # the same object, new memory, no version bump


def _through_set_(idx):
    alias = torch.empty(0, dtype=idx.dtype).set_(idx)  # an alias with its own version counter
    alias[0] = 99


def _through_dlpack(idx):
    alias = torch.from_dlpack(idx.__dlpack__())
    alias[0] = 99


MODIFICATIONS = [
    _in_place,
    _through_a_view,
    _through_data,
    _through_numpy,
    _under_inference_mode,
    _under_no_grad,
    _data_replaced,
    _through_set_,
    _through_dlpack,
]


@pytest.mark.parametrize("mode", ["auto", "sync", "async"])
@pytest.mark.parametrize("modify", MODIFICATIONS, ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("op", OPS)
def test_a_tensor_changed_after_its_check_is_checked_again(op, modify, mode):
    idx = torch.tensor([1, 2, 3])
    with assertscope.guard(mode=mode):
        run_guarded(op, idx, mode)
        run_guarded(op, idx, mode)  # remembered now
        modify(idx)
        assert int(idx[0]) == 99
        with pytest.raises(GuardError) as info:
            run_guarded(op, idx, mode)
    assert 99 in info.value.values["bad_values"]


@pytest.mark.parametrize("mode", ["auto", "sync", "async"])
def test_a_numpy_view_taken_before_the_check_is_seen(mode):
    idx = torch.tensor([1, 2, 3])
    with assertscope.guard(mode=mode):
        view = idx.numpy()
        run_guarded("index_select", idx, mode)
        run_guarded("index_select", idx, mode)
        view[0] = 99
        with pytest.raises(GuardError):
            run_guarded("index_select", idx, mode)


@pytest.mark.parametrize("make", ["from_numpy", "as_tensor", "frombuffer"])
def test_memory_written_outside_pytorch_is_never_trusted(make, reads):
    array = np.array([1, 2, 3], dtype=np.int64)
    if make == "from_numpy":
        idx = torch.from_numpy(array)
    elif make == "as_tensor":
        idx = torch.as_tensor(array)
    else:
        idx = torch.frombuffer(array, dtype=torch.int64)
    with assertscope.guard(mode="sync"):
        TABLE.index_select(0, idx)
        TABLE.index_select(0, idx)
        assert reads[0] == 2
        array[0] = 99
        with pytest.raises(GuardError):
            TABLE.index_select(0, idx)


def test_shared_memory_is_never_trusted(reads):
    idx = torch.tensor([1, 2, 3]).share_memory_()  # another process may write it
    with assertscope.guard(mode="sync"):
        TABLE.index_select(0, idx)
        TABLE.index_select(0, idx)
    assert reads[0] == 2


def test_memory_moved_into_shared_memory_after_its_check_is_never_trusted(reads):
    idx = torch.tensor([1, 2, 3])
    with assertscope.guard(mode="sync"):
        TABLE.index_select(0, idx)
        idx.share_memory_()  # from now on another process may write it
        TABLE.index_select(0, idx)
        TABLE.index_select(0, idx)
    assert reads[0] == 3


@pytest.mark.parametrize("mode", ["auto", "sync", "async"])
def test_inference_tensors_are_never_trusted(mode, reads):
    with torch.inference_mode(), assertscope.guard(mode=mode):
        idx = torch.tensor([1, 2, 3])  # an inference tensor: no version counter
        run_guarded("embedding", idx, mode)
        run_guarded("embedding", idx, mode)
        idx[0] = 99
        with pytest.raises(GuardError):
            run_guarded("embedding", idx, mode)


def test_memory_freed_and_reused_is_a_new_tensor():
    reused = 0
    with assertscope.guard(mode="sync"):
        for _ in range(50):
            good = torch.full((1000,), 1)
            TABLE.index_select(0, good)
            address = good.data_ptr()
            del good
            bad = torch.full((1000,), 99)  # often at the same address, same shape and version
            with pytest.raises(GuardError):
                TABLE.index_select(0, bad)
            reused += bad.data_ptr() == address
    if not reused:
        pytest.skip("the allocator never reused the address")


def test_a_remembered_range_is_only_as_wide_as_the_rule_that_read_it():
    idx = torch.tensor([0, 5, 9])
    with assertscope.guard(mode="sync"):
        torch.randn(10, 4).index_select(0, idx)  # fits 10 rows
        with pytest.raises(GuardError):
            torch.randn(6, 4).index_select(0, idx)  # not 6


def test_an_async_verdict_that_failed_is_not_remembered():
    idx = torch.tensor([1, 2, 99])
    with assertscope.guard(mode="async"):
        TABLE.index_select(0, idx)
        with pytest.raises(GuardError):
            check_point()
        TABLE.index_select(0, idx)
        with pytest.raises(GuardError):
            check_point()


def test_the_cache_can_be_switched_off(monkeypatch, reads):
    from assertscope._guard import _verified

    monkeypatch.setattr(_verified, "enabled", False)
    idx = torch.tensor([1, 2, 3])
    with assertscope.guard(mode="sync"):
        TABLE.index_select(0, idx)
        TABLE.index_select(0, idx)
    assert reads[0] == 2


CTC_LOG_PROBS = torch.randn(12, 2, 7).log_softmax(2)  # T = 12 steps, C = 7 classes
CTC_INPUT_LENGTHS = torch.tensor([12, 12])


def _ctc_loss(targets, target_lengths):
    return F.ctc_loss(CTC_LOG_PROBS, targets, CTC_INPUT_LENGTHS, target_lengths)


def aten_ops(call):
    """The names of the ATen ops `call` runs, as PyTorch's profiler records them."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as recorded:
        call()
    return sorted(event.name for event in recorded.events() if event.name.startswith("aten::"))


def test_ctc_targets_padded_with_the_blank_are_read_once():
    # Blank (0) padding lies in [0, C): the whole tensor's range, remembered, covers the used ids.
    targets = torch.tensor([[1, 2, 3, 0], [4, 5, 6, 6]])
    lengths = torch.tensor([3, 4])
    unguarded = aten_ops(lambda: _ctc_loss(targets, lengths))
    with assertscope.guard(mode="sync"):
        first = aten_ops(lambda: _ctc_loss(targets, lengths))
        assert len(first) > len(unguarded)  # the check read the tensors once
        assert aten_ops(lambda: _ctc_loss(targets, lengths)) == unguarded  # then nothing more
        targets[0, 1] = 7  # a used id past C = 7, written after the check
        with pytest.raises(GuardError, match="ctc_loss"):
            _ctc_loss(targets, lengths)


@pytest.mark.parametrize("mode", ["auto", "sync", "async"])
def test_ctc_padding_outside_the_classes_is_allowed_and_never_vouches_for_used_ids(mode):
    # -1 padding puts the whole tensor outside [0, C): only the used ids may decide.
    targets = torch.tensor([[1, 2, 3, -1], [4, 5, 6, 6]])
    lengths = torch.tensor([3, 4])
    with assertscope.guard(mode=mode):
        _ctc_loss(targets, lengths)
        _ctc_loss(targets, lengths)
        check_point()
        targets[1, 0] = 9
        with pytest.raises(GuardError, match="ctc_loss"):
            _ctc_loss(targets, lengths)
            check_point()
