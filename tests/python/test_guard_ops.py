"""Every guarded op: correct uses run unchanged (bit for bit) under the guard in both modes,
and buggy uses raise GuardError with the right cause, op and user line."""

import os

import pytest
import torch

import assertscope
from assertscope import GuardError, kb

from conftest import check_point
from op_cases import CASES

# "auto" on the CPU lets PyTorch's kernel refuse first and explains the refusal; "sync"
# checks before the op, as it does on CUDA; "async" records a device-side verdict.
MODES = ["auto", "sync", "async"]


def _flatten(result):
    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, (tuple, list)):
        return [t for item in result for t in _flatten(item)]
    return []


def _run_good(case):
    torch.manual_seed(1234)
    result = case.good()
    return _flatten(result)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_bad_input_is_refused_by_pytorch_on_cpu_too(case):
    if not case.cpu_raises:
        pytest.skip("PyTorch's CPU kernel does not check this (a silent out-of-bounds read on CUDA)")
    with pytest.raises((IndexError, RuntimeError, ValueError)):
        case.bad()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_correct_use_gives_identical_results(case, mode):
    expected = _run_good(case)
    with assertscope.guard(mode=mode):
        got = _run_good(case)
        check_point()
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert torch.equal(a, b) or (a.is_floating_point() and torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num()))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_buggy_use_raises_guard_error(case, mode):
    with assertscope.guard(mode=mode):
        with pytest.raises(GuardError) as info:
            case.bad()
            check_point()
    error = info.value
    assert error.cause == case.cause
    assert error.op == case.op
    assert os.path.basename(error.location["file"]) == "op_cases.py"
    assert error.diagnosis["cause"] == case.cause
    assert error.diagnosis["location"] == error.location
    message = str(error)
    title = kb.cause(case.cause)["title"]
    assert message.startswith(f"error[{case.cause}]: {title} in {case.op}\n"), message
    said = [e["text"] for e in error.diagnosis["evidence"] if e["kind"] == "pytorch"]
    if said:
        # Where PyTorch refused the input itself its message is kept, as the pytorch line.
        try:
            case.bad()
        except Exception as pytorch_error:  # noqa: BLE001
            assert said == [f"{type(pytorch_error).__name__}: {pytorch_error}"], said
    message = " ".join(message.split())  # (the report wraps its lines)
    assert "found: " in message and "fix: " in message
    if mode == "async" and not case.host:
        assert "asynchronous guard" in message
