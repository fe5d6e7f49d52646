"""In-process tests of assertscope.scan: the index recording with worker processes,
each batch check, and the findings file."""

import json
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

torch = pytest.importorskip("torch")

from assertscope import scan  # noqa: E402

DATA = '''
import torch
from torch.utils.data import Dataset, DataLoader, IterableDataset

class Pairs(Dataset):
    def __init__(self, y, x=None):
        self.y = y
        self.x = x if x is not None else torch.zeros(len(y), 3)
    def __len__(self):
        return len(self.y)
    def __getitem__(self, i):
        return self.x[i], self.y[i]

class Dicts(Dataset):
    def __len__(self):
        return 20
    def __getitem__(self, i):
        ids = torch.arange(8) + i
        if i == 13:
            ids[3] = 999
        return {"input_ids": ids, "labels": torch.tensor(i % 4)}

class Stream(IterableDataset):
    def __iter__(self):
        for i in range(10):
            yield torch.zeros(2), torch.tensor(5 if i == 6 else 1)

y = torch.arange(40) % 5
y[[3, 17, 33]] = torch.tensor([7, -1, 5])
shuffled = DataLoader(Pairs(y), batch_size=4, shuffle=True, num_workers=2,
                      generator=torch.Generator().manual_seed(3))
onehot = DataLoader(Pairs(torch.eye(4, dtype=torch.long)[torch.arange(12) % 4]), batch_size=4)
column = DataLoader(Pairs((torch.arange(12) % 3).view(-1, 1)), batch_size=4)
floats = DataLoader(Pairs((torch.arange(12) % 3).float()), batch_size=4)
int32 = DataLoader(Pairs((torch.arange(12) % 3).int()), batch_size=4)
def mismatched():
    return DataLoader(Pairs(torch.arange(12) % 3), batch_size=4,
                      collate_fn=lambda items: (torch.zeros(len(items) + 1, 3), torch.stack([b for _, b in items])))
dicts = DataLoader(Dicts(), batch_size=5, num_workers=2)
stream = DataLoader(Stream(), batch_size=4)
unbatched = DataLoader(Pairs(y), batch_size=None)
lastone = DataLoader(Pairs(torch.arange(9) % 2), batch_size=4)
empty_x = DataLoader(Pairs(torch.arange(4) % 2, torch.zeros(4, 0)), batch_size=2)
binary = DataLoader(Pairs(torch.tensor([0., 1., -1., 1.])), batch_size=2)

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm1d(3)
'''


@pytest.fixture()
def module(tmp_path, monkeypatch):
    path = tmp_path / "scandata.py"
    path.write_text(textwrap.dedent(DATA))
    monkeypatch.chdir(tmp_path)
    yield path
    sys.modules.pop("scandata", None)


def run(module, name, *flags):
    out = module.parent / "findings.json"
    assert scan.main([f"{module}:{name}", "--out", str(out), "--no-progress", *flags]) == 0
    return json.loads(out.read_text())


def finding(result, cause):
    found = [f for f in result["findings"] if f["cause"] == cause]
    assert found, result
    return found[0]


def test_indices_are_dataset_indices_with_workers_and_shuffle(module):
    result = run(module, "shuffled", "--num-classes", "5")
    assert result["error"] is None
    assert result["indices"] == "dataset" and result["num_workers"] == 2
    over = finding(result, "target-out-of-range")
    by_check = {f["check"]: f for f in result["findings"]}
    assert {e["index"]: e["value"] for e in by_check["label-range"]["examples"]} == {3: 7, 33: 5}
    assert [(e["index"], e["value"]) for e in by_check["label-negative"]["examples"]] == [(17, -1)]
    assert over["count"] >= 1
    assert result["batches"] == 10 and result["samples"] == 40


def test_labels_outside_the_class_counts_are_counted_too(module):
    label = run(module, "shuffled", "--num-classes", "5")["label"]
    assert label["other_counts"] == [[-1, 1]] and label["ignore_index"] == -100
    assert sum(label["class_counts"]) + 1 == 40


def test_unbatched_loader_and_iterable_dataset(module):
    result = run(module, "unbatched", "--num-classes", "5")
    by_check = {f["check"]: f for f in result["findings"]}
    assert [e["index"] for e in by_check["label-range"]["examples"]] == [3, 33]
    assert [e["index"] for e in by_check["label-negative"]["examples"]] == [17]
    assert result["batches"] == 40
    stream = run(module, "stream", "--num-classes", "5")
    assert stream["indices"] == "iteration"
    assert [e["index"] for e in finding(stream, "target-out-of-range")["examples"]] == [6]


def test_shapes_dtypes_and_batch_sizes(module):
    assert "one-hot" in finding(run(module, "onehot", "--num-classes", "4"), "target-shape")["message"]
    assert "[B, 1]" in finding(run(module, "column", "--num-classes", "3"), "target-shape")["message"]
    assert "float32" in finding(run(module, "floats", "--num-classes", "3"), "target-dtype")["message"]
    assert "int32" in finding(run(module, "int32", "--num-classes", "3"), "target-dtype")["message"]
    mismatch = finding(run(module, "mismatched", "--num-classes", "3"), "batch-size-mismatch")
    assert mismatch["values"] == {"input_batch": 5, "target_batch": 4}
    assert finding(run(module, "empty_x", "--num-classes", "2"), "empty-tensor")
    assert finding(run(module, "binary", "--task", "binary"), "bce-input-range")["examples"][0]["index"] == 2


def test_token_ids_in_dict_batches(module):
    result = run(module, "dicts", "--vocab-size", "100", "--max-positions", "6", "--num-classes", "4")
    tokens = finding(result, "embedding-index-out-of-range")
    assert [e["index"] for e in tokens["examples"]] == [13]
    assert tokens["examples"][0]["value"] == 999
    assert finding(result, "index-out-of-bounds")["values"]["bound"] == 6
    assert result["label"]["class_counts"] == [5, 5, 5, 5]


def test_last_batch_of_one_with_and_without_batchnorm(module):
    warn = finding(run(module, "lastone", "--num-classes", "2"), "batchnorm-single-sample")
    assert warn["severity"] == "warning"
    err = finding(run(module, "lastone", "--num-classes", "2", "--model", f"{module}:Net"), "batchnorm-single-sample")
    assert err["severity"] == "error"


def test_load_errors_are_reported_not_raised(module):
    result = run(module, "nope")
    assert result["error"]["kind"] == "load"
    assert "has no attribute 'nope'" in result["error"]["message"]
    assert "shuffled" in result["error"]["message"]
