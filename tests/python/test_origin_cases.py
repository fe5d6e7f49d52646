"""The quality bars of the origin work, on the labelled buggy scripts of tests/fixtures/origin
(written and labelled before the code): every crash line named, the dataset indices right for
every DataLoader case, and, once the binary has the origin engine, the origin line named for
at least 80% of them. Each script runs
under `assertscope run --json`, as a user would run it."""

import importlib.util
import subprocess
import sys
from pathlib import Path

from conftest import assertscope_binary

SCORE = Path(__file__).resolve().parents[2] / "bench" / "origin" / "score.py"


def load_scorer():
    spec = importlib.util.spec_from_file_location("origin_score", SCORE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def has_origin_engine(binary):
    """The origin line comes from the engine (`assertscope origin`, which `run` uses): without
    it only the crash line and the dataset indices (runtime facts) can be scored."""
    return subprocess.run([binary, "origin", "--help"], capture_output=True).returncode == 0


def test_labelled_scripts_meet_the_origin_quality_bars():
    scorer = load_scorer()
    binary = str(Path(assertscope_binary()).resolve())
    rows = scorer.score(binary, sys.executable)
    totals = scorer.summary(rows)
    assert totals["cases"] >= 25
    assert [r["script"] for r in rows if not r["crash_ok"]] == []
    assert [r["script"] for r in rows if r["loader_case"] and not r["index_ok"]] == []
    if has_origin_engine(binary):
        assert totals["origin_line"] >= 0.8, [r["script"] for r in rows if not r["origin_ok"]]
