"""The asynchronous mode, forced on CPU tensors so its machinery runs everywhere."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import assertscope
from assertscope import GuardError
from assertscope._guard import _ledger
from conftest import check_point


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
        assert all(not ledger.pending for ledger in _ledger.ledgers.values())


def test_the_record_keeps_the_first_of_several_failures():
    ledger = _ledger.Ledger(torch.device("cpu"))
    ledger.copies.clear()
    yes = torch.tensor(True)
    for seq in (7, 5, 9):
        torch.minimum(ledger.record, torch.where(yes, seq, _ledger.NONE), out=ledger.record)
    assert ledger.record.item() == 5


def test_clean_calls_do_not_accumulate():
    with assertscope.guard(mode="async"):
        for _ in range(50):
            F.embedding(torch.tensor([1]), torch.randn(3, 2))
        ledger = _ledger.ledgers[torch.device("cpu")]
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
    assert "assertscope.GuardError (found at exit): error[target-out-of-range]: class target out of range in one_hot\n" in process.stderr
    assert len(list(tmp_path.glob("guard-*.json"))) == 1


# --- torch.inference_mode(): inference tensors keep no version counter --------------------------


@pytest.mark.parametrize("mode", ["async", "auto", "sync"])
def test_clean_calls_on_inference_tensors_run_and_match(mode):
    table = torch.nn.Embedding(10, 4)
    logits = torch.randn(5, 3)
    with torch.inference_mode():
        ids = torch.tensor([1, 2, 9])
        targets = torch.tensor([0, 2, 1, -100, 2])
        expected = (table(ids), F.cross_entropy(logits, targets), ids[torch.tensor([2, 0])])
        with assertscope.guard(mode=mode):
            inside = (table(ids), F.cross_entropy(logits, targets), ids[torch.tensor([2, 0])])
            check_point()
    # The ledger made inside the block is used again outside it, on the same inference tensors
    # (under no_grad: autograd refuses to save inference tensors, guarded or not).
    with assertscope.guard(mode=mode):
        with torch.inference_mode():
            table(ids)
        with torch.no_grad():
            outside = (table(ids), F.cross_entropy(logits, targets), ids[torch.tensor([2, 0])])
        check_point()
    for got in (inside, outside):
        for a, b in zip(got, expected):
            assert torch.equal(a, b)


@pytest.mark.parametrize("mode", ["async", "sync"])
def test_a_bad_id_in_an_inference_tensor_is_reported(mode):
    table = torch.nn.Embedding(10, 4)
    with torch.inference_mode():
        ids = torch.tensor([1, 12, 3])
        with pytest.raises(GuardError) as info:
            with assertscope.guard(mode=mode):
                table(ids)
                check_point()
    assert info.value.op == "embedding" and info.value.values["bad_values"] == [12]
    if mode == "async":
        assert "inference tensor keeps no version counter" in str(info.value)


def test_a_ledger_made_outside_inference_mode_records_failures_inside_it():
    with assertscope.guard(mode="async"):
        F.embedding(torch.tensor([1]), torch.randn(3, 2))  # the ledger starts here
        with torch.inference_mode():
            F.embedding(torch.tensor([5]), torch.randn(3, 2))
            with pytest.raises(GuardError) as info:
                check_point()
        F.embedding(torch.tensor([2]), torch.randn(3, 2))
        check_point()
    assert info.value.values["bad_values"] == [5]
