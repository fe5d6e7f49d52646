"""The asynchronous mode, forced on CPU tensors so its machinery runs everywhere."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import assertscope
from assertscope import GuardError
from assertscope._guard import _engine


def test_the_bad_call_returns_and_the_next_check_point_raises():
    logits = torch.randn(4, 3)
    # The kernel sees the bad target replaced by ignore_index: the loss of the other rows.
    expected = F.cross_entropy(logits[[0, 1, 3]], torch.tensor([0, 1, 2]))
    with assertscope.guard(mode="async"):
        loss = F.cross_entropy(logits, torch.tensor([0, 1, 7, 2]))  # line of the failing call
        with pytest.raises(GuardError) as info:
            loss.item()
    assert torch.equal(loss, expected)
    error = info.value
    assert error.location["code"] == "loss = F.cross_entropy(logits, torch.tensor([0, 1, 7, 2]))  # line of the failing call"
    assert "found by the asynchronous guard at" in str(error) and "test_async.py" in str(error)
    assert error.values["bad_values"] == [7]


@pytest.mark.parametrize("check_point", ["backward", "optimizer.step", "next guarded call", "tolist", "exit of the block"])
def test_every_check_point_reports(check_point):
    model = nn.Linear(3, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(GuardError) as info:
        with assertscope.guard(mode="async"):
            loss = F.cross_entropy(model(torch.randn(2, 3)), torch.tensor([4, 0]))
            if check_point == "backward":
                loss.backward()
            elif check_point == "optimizer.step":
                optimizer.step()
            elif check_point == "next guarded call":
                F.embedding(torch.tensor([0]), torch.randn(2, 2))
            elif check_point == "tolist":
                loss.detach().tolist()
    assert info.value.op == "cross_entropy"


def test_a_failure_stops_the_next_guarded_call_and_leaves_a_clean_ledger():
    with assertscope.guard(mode="async"):
        F.embedding(torch.tensor([9]), torch.randn(3, 2))
        with pytest.raises(GuardError) as info:
            F.one_hot(torch.tensor([5]), 2)  # never runs: the embedding failure is raised first
        assert info.value.op == "embedding"
        torch.zeros(()).item()  # nothing left over
        assert all(not ledger.pending for ledger in _engine._ledgers.values())


def test_the_record_keeps_the_first_of_several_failures():
    ledger = _engine.Ledger(torch.device("cpu"))
    ledger.copies.clear()
    yes = torch.tensor(True)
    for seq in (7, 5, 9):
        torch.minimum(ledger.record, torch.where(yes, seq, _engine.NONE), out=ledger.record)
    assert ledger.record.item() == 5


def test_clean_calls_do_not_accumulate():
    with assertscope.guard(mode="async"):
        for _ in range(50):
            F.embedding(torch.tensor([1]), torch.randn(3, 2))
        ledger = _engine._ledgers[torch.device("cpu")]
        assert len(ledger.pending) <= 1


def test_unguard_reports_a_failure_still_pending():
    assertscope.guard(mode="async")
    torch.randn(3).gather(0, torch.tensor([3]))
    with pytest.raises(GuardError):
        assertscope.unguard()
    assert not assertscope.is_guarded()
    assert torch.Tensor.gather is torch._C.TensorBase.gather


def test_in_place_change_after_the_call_is_noted():
    target = torch.tensor([0, 5])
    with assertscope.guard(mode="async"):
        F.cross_entropy(torch.randn(2, 3), target)
        target[1] = 6
        with pytest.raises(GuardError) as info:
            torch.zeros(()).item()
    assert "modified in place" in str(info.value)


def test_failure_pending_at_exit_is_printed(tmp_path):
    import subprocess
    import sys

    from conftest import PYTHON_DIR

    code = (
        "import torch, assertscope, torch.nn.functional as F\n"
        "assertscope.guard(mode='async')\n"
        "F.one_hot(torch.tensor([3]), 3)\n"
    )
    env = dict(__import__("os").environ, PYTHONPATH=PYTHON_DIR, ASSERTSCOPE_REPORT_DIR=str(tmp_path))
    process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert "assertscope.GuardError (found at exit): error[target-out-of-range]: one_hot" in process.stderr
    assert len(list(tmp_path.glob("guard-*.json"))) == 1
