import os
import sys

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
