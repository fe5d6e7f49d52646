"""The dataset index of the bad sample, for every kind of map-style DataLoader set-up
(loader_cases.py): each script runs for real under the guard, and the guard report it
writes must name the bad sample's index in the outermost dataset's index space, the chain
of datasets down to the user's class, and where the user's class was read."""

import importlib.util
import json
import re
import runpy

import pytest
from loader_cases import CASES

import assertscope
from assertscope import GuardError


def guard_report(tmp_path, monkeypatch, source):
    """Runs `source` as a script under the synchronous guard with a report directory;
    returns (GuardError, the guard report it wrote, the script's lines)."""
    script = tmp_path / "train.py"
    script.write_text(source)
    reports = tmp_path / "reports"
    reports.mkdir()
    monkeypatch.setenv("ASSERTSCOPE_REPORT_DIR", str(reports))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(GuardError) as caught:
        with assertscope.guard(mode="sync"):
            runpy.run_path(str(script), run_name="__main__")
    written = sorted(reports.glob("guard-*.json"))
    assert len(written) == 1, written
    return caught.value, json.loads(written[0].read_text()), source.splitlines()


def line_of(lines, text):
    matches = [n for n, line in enumerate(lines, 1) if text in line]
    assert len(matches) == 1, (text, matches)
    return matches[0]


def _missing(case):
    return [m for m in case.needs if importlib.util.find_spec(m) is None]


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_the_bad_samples_dataset_index_and_chain_are_recorded(tmp_path, monkeypatch, case):
    if _missing(case):
        pytest.skip(f"{case.name} needs {', '.join(_missing(case))} (not installed)")
    error, report, lines = guard_report(tmp_path, monkeypatch, case.source)
    assert error.cause == "target-out-of-range"
    dataset = report["runtime"]["dataset"]
    assert dataset["indices"] == case.indices
    assert report["diagnosis"]["values"]["dataset_indices"] == case.indices
    assert [(level["class"], level["index"]) for level in dataset["chain"]] == case.chain
    user = dataset["chain"][-1]
    if user["module"] == "__main__":  # the user's class: where it is, to follow into it
        assert user["file"] == str(tmp_path / "train.py")
        assert user["getitem_line"] == line_of(lines, "def __getitem__")
        if "def __init__(self" in case.source:
            assert user["init_line"] == min(n for n, line in enumerate(lines, 1) if "def __init__(self" in line)
    assert isinstance(dataset["batch_step"], int) and dataset["batch_step"] >= 1
    # The sample, read again: one honest line, holding the bad label.
    bad = report["diagnosis"]["values"]["bad_values"][0]
    assert re.search(rf"[ =]{bad}\b", dataset["sample"]), dataset["sample"]


READINGS = [c for c in CASES if "class Readings" in c.source]


@pytest.mark.parametrize("case", READINGS, ids=repr)
def test_the_re_read_names_the_line_of_getitem_that_read_the_bad_label(tmp_path, monkeypatch, case):
    if _missing(case):
        pytest.skip(f"{case.name} needs {', '.join(_missing(case))} (not installed)")
    _, report, lines = guard_report(tmp_path, monkeypatch, case.source)
    runtime = report["runtime"]
    assert runtime["observed"][0] == {
        "file": str(tmp_path / "train.py"),
        "line": line_of(lines, "label = self.y[i]"),
        "function": "__getitem__",
        "name": "label",
        "value": 3,
    }
    # `self.y` read where the sample's index points: it holds the bad label there.
    live = {entry["attribute"]: entry for entry in runtime["live"] if entry["class"] == "Readings"}
    assert live["y"]["holds_bad_value"] is True and live["y"]["value"] == 3
    assert live["y"]["index"] == 37 and live["y"]["summary"] == "tensor[120] i64"
    assert live["x"]["holds_bad_value"] is False


def test_a_collate_fn_that_makes_the_bad_value_is_watched_on_the_re_read_sample(tmp_path, monkeypatch):
    source = """
import torch
from torch.utils.data import DataLoader

def collate(samples):
    xs = torch.stack([x for x, _ in samples])
    ys = torch.tensor([y for _, y in samples]) + 1
    return xs, ys

data = [(torch.randn(5), i % 5) for i in range(40)]
head = torch.nn.Linear(5, 5)
for x, y in DataLoader(data, batch_size=8, collate_fn=collate):
    torch.nn.functional.cross_entropy(head(x), y)
"""
    _, report, lines = guard_report(tmp_path, monkeypatch, source)
    dataset = report["runtime"]["dataset"]
    assert dataset["indices"] == [4]
    assert dataset["collate"] == {"file": str(tmp_path / "train.py"), "line": line_of(lines, "def collate"), "function": "collate"}
    observed = report["runtime"]["observed"]
    assert [(o["line"], o["name"], o["value"]) for o in observed] == [(line_of(lines, "ys = torch.tensor"), "ys", 5)]


def test_the_loader_that_made_the_batch_is_named_with_its_step(tmp_path, monkeypatch):
    source = """
import torch
from torch.utils.data import DataLoader, TensorDataset

y = torch.arange(1000) % 4
y[913] = 4
head = torch.nn.Linear(3, 4)
loader = DataLoader(TensorDataset(torch.randn(1000, 3), y), batch_size=100)
for xb, yb in loader:
    torch.nn.functional.cross_entropy(head(xb), yb)
"""
    error, report, lines = guard_report(tmp_path, monkeypatch, source)
    dataset = report["runtime"]["dataset"]
    assert dataset["loader"] == {"file": str(tmp_path / "train.py"), "line": line_of(lines, "loader = DataLoader"), "function": "<module>"}
    assert (dataset["batch_step"], dataset["batches_in_epoch"]) == (10, 10)
    assert dataset["collate"] is None
    # A fact, not a guess: the first bad value came late, so not every label is off.
    assert "step 10 of 10 (dataset index 913) after 9 clean batches" in error.diagnosis["fix"]
