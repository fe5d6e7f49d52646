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

from op_cases import CASES  # noqa: E402


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


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("case", [c for c in CASES if c.cpu_raises], ids=repr)
def test_every_case_on_cuda(case, mode):
    original = torch.Tensor.__dict__.get("to")
    del original
    with torch.device("cuda"):
        with assertscope.guard(mode=mode):
            with pytest.raises(GuardError) as info:
                case.bad()
                torch.cuda.synchronize()
                torch.zeros((), device="cuda").item()
    assert info.value.cause == case.cause
    assert torch.ones(1, device="cuda").item() == 1.0
