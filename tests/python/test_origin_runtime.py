"""The guard report's `runtime` block, field by field, on real scripts: the failing call's
frames and the locals holding the tensor, the operand, the module's whole construction
stack, sources that are not files; and the safety of the re-read: one read per bad sample,
the random number generators untouched, a read that raises or runs too long abandoned
with a note, the tracer always removed."""

import json
import linecache
import os
import random
import runpy
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, Dataset

import assertscope
from assertscope import GuardError

LINES = Path(__file__).resolve().parents[2] / "python" / "assertscope" / "_guard" / "origin" / "lines.py"


def guarded(tmp_path, monkeypatch, function):
    """Runs `function` under the synchronous guard with a report directory; returns the
    GuardError and the report it wrote."""
    reports = tmp_path / "reports"
    reports.mkdir()
    monkeypatch.setenv("ASSERTSCOPE_REPORT_DIR", str(reports))
    with pytest.raises(GuardError) as caught:
        with assertscope.guard(mode="sync"):
            function()
    (written,) = reports.glob("guard-*.json")
    return caught.value, json.loads(written.read_text())


def run_file(tmp_path, monkeypatch, source):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(source))
    error, report = guarded(tmp_path, monkeypatch, lambda: runpy.run_path(str(script), run_name="__main__"))
    return error, report, script, script.read_text().splitlines()


def line_of(lines, text):
    """The one line holding `text` (or equal to it, when several hold it)."""
    found = [n for n, line in enumerate(lines, 1) if text in line]
    if len(found) > 1:
        found = [n for n, line in enumerate(lines, 1) if line.strip() == text]
    (line,) = found
    return line


NESTED = """
import torch
import torch.nn as nn

LABELS = ["neg", "pos"]


class Head(nn.Module):
    def __init__(self, hidden, n_out):
        super().__init__()
        self.proj = nn.Linear(hidden, n_out)

    def forward(self, h):
        return self.proj(h)


class Model(nn.Module):
    def __init__(self, n_out):
        super().__init__()
        self.head = Head(8, n_out)

    def forward(self, x):
        return self.head(x)


def main():
    model = Model(n_out=len(LABELS))
    batch = {"x": torch.randn(4, 8), "labels": torch.tensor([0, 1, 2, 1])}
    logits = model(batch["x"])
    loss = nn.functional.cross_entropy(logits, batch["labels"])


main()
"""


def test_the_runtime_block_of_a_failing_call_field_by_field(tmp_path, monkeypatch):
    started = time.time()
    error, report, script, lines = run_file(tmp_path, monkeypatch, NESTED)
    runtime = report["runtime"]
    assert runtime["version"] == 1
    assert runtime["process_start"] <= started <= report["time"]
    stat = os.stat(script)
    stamp = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    assert runtime["frames"][:2] == [
        {"file": str(script), "line": line_of(lines, "loss = "), "function": "main", **stamp, "holders": ["batch['labels']"]},
        {"file": str(script), "line": line_of(lines, "main()"), "function": "<module>", **stamp, "holders": []},
    ]
    assert runtime["operand"] == {"parameter": "target", "index": 1}
    # The head's whole construction stack, innermost first: the size argument can be followed
    # from nn.Linear(hidden, n_out) to Model(n_out=len(LABELS)).
    (head,) = runtime["modules"]
    sites = [(s["line"], s["function"]) for s in head["sites"]]
    assert sites[:4] == [
        (line_of(lines, "self.proj = nn.Linear"), "__init__"),
        (line_of(lines, "self.head = Head(8, n_out)"), "__init__"),
        (line_of(lines, "model = Model(n_out"), "main"),
        (line_of(lines, "main()"), "<module>"),
    ]
    assert {k: head[k] for k in ("role", "class", "size_argument", "size", "need")} == {
        "role": "head", "class": "Linear", "size_argument": "out_features", "size": 2, "need": 3,
    }
    assert all(s["file"] == str(script) for s in head["sites"][:4])
    assert "dataset" not in runtime and "observed" not in runtime and "sources" not in runtime
    assert error.runtime == runtime


def test_a_view_of_a_local_and_a_tuple_batch_name_their_holders(tmp_path, monkeypatch):
    _, report, _, _ = run_file(
        tmp_path,
        monkeypatch,
        """
        import torch

        pair = (torch.randn(6, 3), torch.tensor([[0, 1, 5], [1, 2, 0]]))
        labels = pair[1]
        torch.nn.functional.cross_entropy(pair[0], labels.view(-1))
        """,
    )
    assert report["runtime"]["frames"][0]["holders"] == ["pair[1]", "labels"]


def test_a_notebook_cell_sends_its_text(tmp_path, monkeypatch):
    cell = "import torch\nids = torch.tensor([1, 9])\ntable = torch.nn.Embedding(4, 2)\nout = table(ids)\n"
    name = "<ipython-input-7-0123456789ab>"
    linecache.cache[name] = (len(cell), None, cell.splitlines(True), name)  # as IPython registers a cell
    try:
        _, report = guarded(tmp_path, monkeypatch, lambda: exec(compile(cell, name, "exec"), {}))
    finally:
        linecache.cache.pop(name, None)
    runtime = report["runtime"]
    assert runtime["frames"][0] == {"file": name, "line": 4, "function": "<module>", "holders": ["ids"]}
    assert runtime["sources"] == {name: cell}
    # The parameter of the op the guard wraps: torch.embedding(weight, indices).
    assert runtime["operand"] == {"parameter": "indices", "index": 1}
    assert runtime["modules"][0]["size_argument"] == "num_embeddings"
    assert runtime["modules"][0]["sites"][0] == {"file": name, "line": 3, "function": "<module>"}


class Counted(Dataset):
    """Labels with one bad entry; counts every read of each index."""

    def __init__(self, bad=6, n=16):
        self.labels = [i % 3 for i in range(n)]
        self.labels[bad] = 3
        self.reads = {}

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        self.reads[i] = self.reads.get(i, 0) + 1
        label = self.labels[i]
        return torch.ones(2), label


def train(dataset, batch_size=4):
    head = torch.nn.Linear(2, 3)
    for x, y in DataLoader(dataset, batch_size=batch_size):
        torch.nn.functional.cross_entropy(head(x), y)


def test_a_dataset_with_side_effects_is_read_again_exactly_once(tmp_path, monkeypatch):
    data = Counted(bad=6)
    _, report = guarded(tmp_path, monkeypatch, lambda: train(data))
    assert report["runtime"]["dataset"]["indices"] == [6]
    assert data.reads == {i: 2 if i == 6 else 1 for i in range(8)}
    assert [o["name"] for o in report["runtime"]["observed"]] == ["label"]


class ReadOnce(Counted):
    def __getitem__(self, i):
        if self.reads.get(i):
            raise RuntimeError(f"sample {i} was already consumed")
        return super().__getitem__(i)


def test_a_re_read_that_raises_is_abandoned_with_a_note(tmp_path, monkeypatch):
    error, report = guarded(tmp_path, monkeypatch, lambda: train(ReadOnce(bad=5)))
    notes = [e["text"] for e in report["diagnosis"]["evidence"] if e["kind"] == "origin"]
    assert "reading dataset[5] again raised RuntimeError: sample 5 was already consumed; not re-read" in notes
    # The index is still known from the batch (the failing tensor is the batch's own memory).
    assert report["runtime"]["dataset"]["indices"] == [5]
    assert "observed" not in report["runtime"] and "sample" not in report["runtime"]["dataset"]
    assert sys.gettrace() is None
    assert "not re-read" in " ".join(str(error).split())  # (the report wraps its lines)


class SlowOnSecondRead(Counted):
    def __getitem__(self, i):
        if self.reads.get(i):
            n = 0
            while True:
                n += 1
        return super().__getitem__(i)


def test_a_re_read_that_runs_too_long_is_stopped_and_abandoned(tmp_path, monkeypatch):
    from assertscope._guard.origin import reread

    monkeypatch.setattr(reread, "READ_SECONDS", 0.2)
    _, report = guarded(tmp_path, monkeypatch, lambda: train(SlowOnSecondRead(bad=9)))
    notes = [e["text"] for e in report["diagnosis"]["evidence"] if e["kind"] == "origin"]
    assert "reading dataset[9] again took over 0.2 s; abandoned" in notes
    assert report["runtime"]["dataset"]["indices"] == [9]
    assert sys.gettrace() is None


class Augmented(Counted):
    """Draws from every generator a dataset may use: torch's, Python's, NumPy's, its own."""

    def __init__(self):
        super().__init__(bad=6)
        self.generator = torch.Generator().manual_seed(1)
        self.rng = np.random.default_rng(2)
        self.py = random.Random(3)

    def __getitem__(self, i):
        noise = torch.rand(2) + torch.randn(2, generator=self.generator)
        jitter = random.random() + np.random.rand() + self.rng.random() + self.py.random()
        x, label = super().__getitem__(i)
        return x + noise + jitter, label


def _states(data):
    return [
        torch.get_rng_state(),
        random.getstate(),
        np.random.get_state()[1].copy(),
        data.generator.get_state(),
        data.rng.bit_generator.state,
        data.py.getstate(),
    ]


def test_the_re_read_leaves_every_random_number_generator_as_it_was(tmp_path, monkeypatch):
    data = Augmented()
    head = torch.nn.Linear(2, 3)
    seen = {}

    def loop():
        for x, y in DataLoader(data, batch_size=4):
            seen["before"] = _states(data)
            torch.nn.functional.cross_entropy(head(x), y)

    _, report = guarded(tmp_path, monkeypatch, loop)
    assert data.reads[6] == 2  # it was read again
    after = _states(data)
    for before, now in zip(seen["before"], after):
        if isinstance(before, torch.Tensor):
            assert torch.equal(before, now)
        elif isinstance(before, np.ndarray):
            assert np.array_equal(before, now)
        else:
            assert before == now


class Tables(Dataset):
    """Tables of every kind a dataset keeps, and a property that must never run."""

    def __init__(self):
        self.names = [f"row{i}" for i in range(12)]
        self.stars = np.array([i % 5 for i in range(12)])
        self.stars[7] = 5
        self.columns = {"stars": torch.tensor(self.stars), "length": [len(n) for n in self.names]}
        self.properties_read = 0

    @property
    def label_table(self):
        self.properties_read += 1
        return self.stars

    def __len__(self):
        return len(self.names)

    def __getitem__(self, i):
        return torch.zeros(3), int(self.stars[i])


def test_live_reads_use_plain_item_access_on_the_datasets_own_attributes(tmp_path, monkeypatch):
    data = Tables()
    head = torch.nn.Linear(3, 5)

    def loop():
        for x, y in DataLoader(data, batch_size=4):
            torch.nn.functional.cross_entropy(head(x), y)

    _, report = guarded(tmp_path, monkeypatch, loop)
    live = {entry["attribute"]: entry for entry in report["runtime"]["live"]}
    assert live["stars"] == {"class": "Tables", "attribute": "stars", "index": 7, "value": 5, "holds_bad_value": True, "summary": "ndarray[12] int64"}
    assert live["columns['stars']"]["holds_bad_value"] is True
    assert live["columns['stars']"]["summary"] == "tensor[12] i64"
    assert live["names"] == {"class": "Tables", "attribute": "names", "index": 7, "value": "row7", "holds_bad_value": False, "summary": "list[str] len=12"}
    assert live["columns['length']"]["holds_bad_value"] is False
    assert "label_table" not in live and "properties_read" not in live
    assert data.properties_read == 0


def test_live_reads_of_pandas_columns(tmp_path, monkeypatch):
    pandas = pytest.importorskip("pandas", reason="pandas is not installed: the pandas live read is not tested")

    class Frame(Dataset):
        def __init__(self):
            self.frame = pandas.DataFrame({"text": [f"t{i}" for i in range(10)], "stars": [i % 4 for i in range(10)]})
            self.frame.loc[8, "stars"] = 4

        def __len__(self):
            return len(self.frame)

        def __getitem__(self, i):
            return torch.zeros(2), int(self.frame["stars"].iloc[i])

    head = torch.nn.Linear(2, 4)

    def loop():
        for x, y in DataLoader(Frame(), batch_size=5):
            torch.nn.functional.cross_entropy(head(x), y)

    _, report = guarded(tmp_path, monkeypatch, loop)
    live = {entry["attribute"]: entry for entry in report["runtime"]["live"]}
    assert live["frame['stars']"]["holds_bad_value"] is True and live["frame['stars']"]["value"] == 4
    assert live["frame['text']"]["value"] == "t8"


WATCH = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("lines", sys.argv[1])
lines = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lines)

TABLE = [0, 1, 7, 2]

def helper(k):
    shifted = TABLE[k] + 0
    return shifted

def read(i):
    first = TABLE[0]
    value = helper(i)
    doubled = [value, value]
    return doubled

def lookup(i):
    return {"id": i, "label": TABLE[i] * 1}

holds = lambda v: 7 if (v == 7 if isinstance(v, int) else isinstance(v, list) and 7 in v) else None
wanted = lambda code: code.co_filename == __file__
result, seen, abandoned = lines.watch(lambda: read(2), wanted, holds, 5.0)
_, returned, _ = lines.watch(lambda: lookup(2), wanted, holds, 5.0)

def spin():
    n = 0
    while True:
        n += 1

_, _, stopped = lines.watch(spin, wanted, holds, 0.1)
try:
    lines.watch(lambda: 1 / 0, wanted, holds, 5.0)
except ZeroDivisionError:
    raised = True
free = [sys.monitoring.get_tool(t) for t in range(6)] if hasattr(sys, "monitoring") else None
print(json.dumps({"result": result, "seen": [s[1:] for s in seen], "returned": [s[1:] for s in returned], "abandoned": abandoned, "stopped": stopped,
                  "raised": raised, "trace": sys.gettrace() is None, "free": free, "monitoring": hasattr(sys, "monitoring")}))
"""


def _pythons():
    found = [sys.executable]
    for name in ("python3.12", "python3.13", "python3.14"):
        path = shutil.which(name)
        if path and subprocess.run([path, "-c", "import sys"], capture_output=True).returncode == 0:
            found.append(path)
    return found


@pytest.mark.parametrize("python", _pythons(), ids=os.path.basename)
def test_lines_are_watched_with_monitoring_or_settrace_and_the_watch_always_ends(tmp_path, python):
    script = tmp_path / "watch.py"
    script.write_text(WATCH)
    done = subprocess.run([python, str(script), str(LINES)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["result"] == [7, 7]
    # In order: the local that first held 7 in each frame; the lambda that passes the value
    # on holds it in no local, so its return line is recorded.
    assert out["seen"] == [
        [10, "helper", "shifted", 7], [15, "read", "value", 7], [16, "read", "doubled", 7], [24, "<lambda>", "<return>", 7]
    ]
    # A value made in a return expression: the return line, in the frame that made it.
    assert out["returned"] == [[20, "lookup", "<return>", 7], [25, "<lambda>", "<return>", 7]]
    assert out["stopped"] is True and out["abandoned"] is False and out["raised"] is True
    assert out["trace"] is True
    if out["monitoring"]:
        assert out["free"] == [None] * 6

