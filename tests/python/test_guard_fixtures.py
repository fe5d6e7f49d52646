"""The logs in tests/fixtures/guard, which `explain` is tested on, are what the guard and
`assertscope run` print today: regenerated from the real guard and binary, they must equal
the committed files (run tests/fixtures/guard/regenerate.py after changing the output)."""

import importlib.util
from pathlib import Path

import pytest

from snapshots import normalise

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "guard"


def regenerate_module():
    spec = importlib.util.spec_from_file_location("regenerate", FIXTURES / "regenerate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory):
    out = tmp_path_factory.mktemp("guard-fixtures")
    regenerate_module().regenerate(out)
    return out


@pytest.mark.parametrize("name", ["run-redirected.log", "notebook-cell.log", "torchrun-rank1.log"])
def test_the_committed_log_is_what_the_guard_prints_today(regenerated, name):
    # (caret lines are left out: Python versions draw them differently)
    now, committed = (normalise((d / name).read_text()) for d in (regenerated, FIXTURES))
    assert now == committed, f"tests/fixtures/guard/{name} is stale: run tests/fixtures/guard/regenerate.py\n{now}"
