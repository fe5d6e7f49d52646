"""What the user reads around a GuardError holds nothing of assertscope's own code: the
traceback ends at the user's call into PyTorch (no frame of the guard), the exception
prints as `assertscope.GuardError: error[...]` while staying the error PyTorch would have
raised, and a warning raised in PyTorch code called through the guard's wrappers is shown
where it would have been without them."""

import pickle
import subprocess
import sys
import textwrap

import pytest
import torch

import assertscope
from assertscope import GuardError

BAD_TARGET = textwrap.dedent(
    """\
    import torch, assertscope
    assertscope.guard()
    logits, y = torch.zeros(4, 3), torch.tensor([0, 1, 2, 3])
    loss = torch.nn.functional.cross_entropy(logits, y)
    """
)


def run_python(code, *args):
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)


def test_the_uncaught_guard_error_prints_as_the_readme_shows_without_the_guards_frames():
    out = run_python(BAD_TARGET)
    assert out.returncode == 1
    lines = out.stderr.splitlines()
    files = [line for line in lines if line.lstrip().startswith("File ")]
    # The user's line, then PyTorch's own frames, as without the guard.
    assert files[0].endswith("line 4, in <module>") and files[-1].endswith("in cross_entropy"), files
    assert not [f for f in files if "assertscope" in f], files
    assert "assertscope.GuardError: error[target-out-of-range]: class target out of range in cross_entropy" in lines


def test_a_caught_guard_error_formats_without_the_guards_frames():
    """As Ray prints a worker's error and sends it to the driver, or `logging.exception` logs it:
    formatted while it is caught, before any excepthook runs."""
    code = BAD_TARGET.replace("loss = ", "try:\n    loss = ") + textwrap.dedent(
        """\
        except IndexError:
            import traceback
            print(traceback.format_exc())
        """
    )
    out = run_python(code)
    assert out.returncode == 0, out.stderr
    files = [line for line in out.stdout.splitlines() if line.lstrip().startswith("File ")]
    assert files and files[0].endswith("line 5, in <module>") and files[-1].endswith("in cross_entropy"), out.stdout
    assert not [f for f in files if "assertscope" in f], files


def test_a_guard_error_is_still_the_error_pytorch_raises_and_pickles_as_such():
    with assertscope.guard(mode="sync"):
        with pytest.raises(IndexError) as info:
            torch.nn.functional.cross_entropy(torch.zeros(2, 3), torch.tensor([0, 3]))
    error = info.value
    assert isinstance(error, GuardError) and type(error).__qualname__ == "GuardError"
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error) and isinstance(copy, IndexError) and str(copy) == str(error)


WARNINGS = textwrap.dedent(
    """\
    import warnings, torch, assertscope
    warnings.simplefilter("always")
    assertscope.guard()
    from torch.utils.data import DataLoader, TensorDataset
    with warnings.catch_warnings(record=True) as caught:
        for _ in DataLoader(TensorDataset(torch.zeros(4)), pin_memory=True):
            pass
        torch.arange(4.0)[torch.tensor([1, 0, 1, 0], dtype=torch.uint8)]
    for w in caught:
        print(w.filename, w.lineno, str(w.message)[:40], sep="|")
    """
)


def test_warnings_raised_through_the_guards_wrappers_keep_their_place():
    out = run_python(WARNINGS)
    assert out.returncode == 0, out.stderr
    shown = [line.split("|") for line in out.stdout.splitlines()]
    by_message = {message: (filename, line) for filename, line, message in shown}
    pin = next(v for k, v in by_message.items() if "pin_memory" in k)
    # PyTorch warns with stacklevel=2 from its iterator's __init__: its own dataloader.py.
    assert pin[0].replace("\\", "/").endswith("torch/utils/data/dataloader.py"), shown
    uint8 = next(v for k, v in by_message.items() if "uint8" in k)
    # A C++ TORCH_WARN names the Python line that called the op: the user's.
    assert uint8 == ("<string>", "8"), shown
    assert not [s for s in shown if "assertscope" in s[0]], shown
