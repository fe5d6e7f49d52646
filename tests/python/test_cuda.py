"""On a CUDA machine: the asynchronous guard adds no host-device synchronisation, keeps the
CUDA context healthy, and raises the same GuardError the synchronous mode raises.
Skipped where there is no GPU (scripts/gpu-check runs it where there is)."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import assertscope
from assertscope import GuardError

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")



@pytest.fixture
def sync_debug_error():
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    yield
    torch.cuda.set_sync_debug_mode("default")


def step(model, ids, labels):
    logits = model(ids)
    loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1))
    loss = loss + logits.gather(2, ids.unsqueeze(2)).mean() * 0.0 + logits[:, torch.tensor([0], device="cuda")].sum() * 0.0
    loss.backward()
    return loss


def test_async_guard_adds_no_sync(sync_debug_error):
    model = nn.Sequential(nn.Embedding(100, 16), nn.Linear(16, 100)).cuda()
    ids = torch.randint(0, 100, (4, 8), device="cuda")
    labels = ids.roll(-1, 1)
    labels[:, -2:] = -100
    with assertscope.guard(mode="auto"):
        for _ in range(5):
            step(model, ids, labels)
        torch.multinomial(torch.rand(4, 10, device="cuda"), 1)
        F.binary_cross_entropy(torch.rand(8, device="cuda"), torch.rand(8, device="cuda"))
        torch.cuda.set_sync_debug_mode("default")


def test_async_failure_is_raised_at_a_check_point_and_the_context_stays_healthy(sync_debug_error):
    model = nn.Sequential(nn.Embedding(100, 16), nn.Linear(16, 10)).cuda()
    ids = torch.randint(0, 100, (4, 8), device="cuda")
    labels = torch.full((4, 8), 10, device="cuda")
    with assertscope.guard(mode="auto"):
        logits = model(ids)
        loss = F.cross_entropy(logits.view(-1, 10), labels.view(-1))  # no kernel sees label 10
        torch.cuda.set_sync_debug_mode("default")
        with pytest.raises(GuardError) as info:
            loss.item()
    assert info.value.op == "cross_entropy"
    assert info.value.location["code"].startswith("loss = F.cross_entropy(")
    assert torch.ones(3, device="cuda").sum().item() == 3.0  # the CUDA context still works


CUDA_BUGS = [
    ("embedding", "embedding-index-out-of-range", lambda d: F.embedding(torch.tensor([0, 7], device=d), torch.randn(7, 2, device=d))),
    ("index", "index-out-of-bounds", lambda d: torch.randn(4, 3, device=d)[torch.tensor([4], device=d)]),
    ("gather", "index-out-of-bounds", lambda d: torch.randn(4, 3, device=d).gather(1, torch.tensor([[-1]] * 4, device=d))),
    ("index_add_", "index-out-of-bounds", lambda d: torch.zeros(3, device=d).index_add_(0, torch.tensor([3], device=d), torch.ones(1, device=d))),
    ("one_hot", "target-out-of-range", lambda d: F.one_hot(torch.tensor([0, 3], device=d), 3)),
    ("multinomial", "invalid-probabilities", lambda d: torch.multinomial(torch.tensor([[float("nan"), 1.0]], device=d), 1)),
    ("binary_cross_entropy", "bce-input-range", lambda d: F.binary_cross_entropy(torch.tensor([1.5], device=d), torch.ones(1, device=d))),
    ("nll_loss", "target-out-of-range", lambda d: F.nll_loss(torch.randn(2, 3, 4, 4, device=d), torch.full((2, 4, 4), 255, device=d))),
]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("op, cause, bug", CUDA_BUGS, ids=[b[0] for b in CUDA_BUGS])
def test_guarded_ops_on_cuda(op, cause, bug, mode):
    with assertscope.guard(mode=mode):
        with pytest.raises(GuardError) as info:
            bug("cuda")
            torch.cuda.synchronize()
    assert (info.value.op, info.value.cause) == (op, cause)
    assert torch.ones(1, device="cuda").item() == 1.0  # no device-side assert happened


def test_inference_mode_on_the_gpu_runs_without_a_sync_and_reports(sync_debug_error):
    model = nn.Sequential(nn.Embedding(100, 16), nn.Linear(16, 100)).cuda()
    with torch.inference_mode():
        ids = torch.randint(0, 100, (4, 8), device="cuda")
        with assertscope.guard(mode="auto"):
            for _ in range(3):
                model(ids)
            bad = ids.clone()
            bad[0, 0] = 100
            model(bad)
            torch.cuda.set_sync_debug_mode("default")
            with pytest.raises(GuardError) as info:
                torch.cuda.synchronize()
                torch.zeros((), device="cuda").item()
    assert info.value.op == "embedding" and info.value.values["bad_values"] == [100]


def test_a_reused_index_is_checked_on_the_device_once_and_again_after_a_change(sync_debug_error):
    # A clean asynchronous verdict is remembered (_verified): the unchanged tensor queues no
    # device-side check again; a change in place is checked (and caught) again.
    from assertscope._guard import _ledger

    table = torch.randn(10, 4, device="cuda")
    idx = torch.tensor([1, 2, 3], device="cuda")
    with assertscope.guard(mode="auto"):
        table.index_select(0, idx)
        torch.cuda.set_sync_debug_mode("default")
        torch.cuda.synchronize()  # a check point: the clean verdict arrives
        torch.cuda.set_sync_debug_mode("error")
        ledger = _ledger.ledgers[idx.device]
        assert not ledger.pending
        for _ in range(3):
            table.index_select(0, idx)
            F.embedding(idx, table)
        assert not ledger.pending  # nothing was queued for the unchanged tensor
        idx[0] = 99
        table.index_select(0, idx)
        assert ledger.pending
        torch.cuda.set_sync_debug_mode("default")
        with pytest.raises(GuardError) as info:
            torch.cuda.synchronize()
    assert info.value.values["bad_values"] == [99]
