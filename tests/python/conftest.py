import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON_DIR = os.path.join(ROOT, "python")
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)


@pytest.fixture(autouse=True)
def _guard_off_after_each_test():
    yield
    import assertscope

    if assertscope.is_guarded():
        try:
            assertscope.unguard()
        except assertscope.GuardError:
            pass


def check_point():
    """A natural sync point (`.item()`): where the asynchronous guard reports."""
    import torch

    torch.zeros(()).item()


def assertscope_binary():
    """The assertscope binary the tests run: ASSERTSCOPE_BIN, else this checkout's build,
    else one on PATH."""
    explicit = os.environ.get("ASSERTSCOPE_BIN")
    if explicit:
        return explicit
    repo = Path(ROOT)
    for candidate in (repo / "target" / "debug" / "assertscope", repo / "target" / "release" / "assertscope"):
        if candidate.exists():
            return str(candidate)
    found = shutil.which("assertscope")
    if found:
        return found
    pytest.fail("the assertscope binary is not built: run cargo build or set ASSERTSCOPE_BIN")
