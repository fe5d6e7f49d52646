"""In-process tests of assertscope.scan: the index recording with worker processes and
the facts it gathers from each field (the binary's checks judge them: tests/check_scan.rs)."""

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
nan_x = torch.zeros(8, 3)
nan_x[5, 1] = float("nan")
nan_inputs = DataLoader(Pairs(torch.arange(8) % 2, nan_x), batch_size=4)
words = DataLoader([(torch.zeros(2), "cat"), (torch.zeros(2), "dog")], batch_size=2)
listed = DataLoader([(torch.zeros(2), [i % 7, (i + 3) % 7]) for i in range(12)], batch_size=4)
ragged = DataLoader([(torch.zeros(2), list(range(i % 3 + 1))) for i in range(12)], batch_size=4,
                    collate_fn=lambda items: (torch.stack([x for x, _ in items]), [y for _, y in items]))
no_labels = DataLoader([{"input_ids": torch.arange(3), "cls": [i, i]} for i in range(6)], batch_size=3)

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


PLAN = {
    "labels": {"hist_len": 5, "upper": 5, "ignore": -100, "max_positions": None, "row_patterns": True},
    "tokens": {"hist_len": 100, "upper": 100, "ignore": None, "max_positions": 6, "row_patterns": False},
    "inputs": {"hist_len": 65536, "upper": None, "ignore": None, "max_positions": None, "row_patterns": False,
               "sort_floats": False},
}


def run(module, name, *flags, plan=PLAN):
    out = module.parent / "facts.json"
    assert scan.main([f"{module}:{name}", "--out", str(out), "--plan", json.dumps(plan), "--no-progress", *flags]) == 0
    return json.loads(out.read_text())


def field(result, role):
    found = [f for f in result["fields"] if f["role"] == role]
    assert found, result
    return found[0]


def firsts(examples):
    return [(e["index"], e["value"]) for e in examples["first"]]


def test_the_document_holds_facts_not_verdicts(module):
    result = run(module, "shuffled")
    assert result["version"] == 3 and result["error"] is None
    assert "findings" not in result and "cause" not in json.dumps(result)


def test_indices_are_dataset_indices_with_workers_and_shuffle(module):
    result = run(module, "shuffled")
    assert result["indices"] == "dataset" and result["num_workers"] == 2
    labels = field(result, "labels")
    assert sorted(firsts(labels["over_bound"])) == [(3, 7), (33, 5)]
    assert firsts(labels["negative"]) == [(17, -1)]
    assert labels["outside"]["distinct"] == [[-1, 1], [5, 1], [7, 1]]
    assert sum(labels["hist"]) + 3 == 40 and labels["samples"] == 40
    batches = result["batches"]
    assert (batches["count"], batches["samples"], batches["first_size"]) == (10, 40, 4)
    # Each example names the batch its sample came in.
    batch_of = {e["index"]: e["batch"] for e in labels["over_bound"]["first"]}
    assert all(0 <= b < 10 for b in batch_of.values())


def test_unbatched_loader_and_iterable_dataset(module):
    result = run(module, "unbatched")
    labels = field(result, "labels")
    assert [i for i, _ in firsts(labels["over_bound"])] == [3, 33]
    assert [i for i, _ in firsts(labels["negative"])] == [17]
    assert result["batches"]["count"] == 40 and labels["sample_shape"] == []
    stream = run(module, "stream")
    assert stream["indices"] == "iteration"
    assert firsts(field(stream, "labels")["over_bound"]) == [(6, 5)]


def test_shapes_dtypes_rows_and_batch_sizes(module):
    onehot = field(run(module, "onehot"), "labels")
    assert onehot["sample_shape"] == [4] and onehot["patterns"]["one_hot"]["count"] == 12
    assert onehot["patterns"]["one_hot"]["first"][0]["value"] == {"row": [1, 0, 0, 0]}
    assert field(run(module, "column"), "labels")["sample_shape"] == [1]
    floats = field(run(module, "floats"), "labels")
    assert (floats["dtype"], floats["whole_floats"], floats["non_integer"]["count"]) == ("float32", 12, 0)
    assert field(run(module, "int32"), "labels")["dtype"] == "int32"
    mismatched = run(module, "mismatched")
    mismatch = mismatched["batches"]["size_mismatches"]
    assert mismatch["count"] == 3
    # The labels are still gathered: the batch has the 4 samples the sampler handed out.
    assert field(mismatched, "labels")["samples"] == 12 and mismatched["batches"]["samples"] == 12
    assert (mismatch["first"][0]["input_samples"], mismatch["first"][0]["label_samples"]) == (5, 4)
    empty = field(run(module, "empty_x"), "inputs")
    assert empty["lengths"]["empty"]["count"] == 4 and empty["hist"] == []
    binary = field(run(module, "binary"), "labels")
    assert firsts(binary["negative"]) == [(2, -1)]


def test_token_ids_in_dict_batches(module):
    result = run(module, "dicts")
    tokens = field(result, "tokens")
    assert tokens["name"] == "batch['input_ids']"
    assert firsts(tokens["over_bound"]) == [(13, 999)]
    assert tokens["over_bound"]["first"][0]["position"] == 3
    assert tokens["lengths"]["too_long"]["count"] == 20
    assert field(result, "labels")["hist"] == [5, 5, 5, 5]


def test_nan_and_text_values(module):
    nan = field(run(module, "nan_inputs"), "inputs")
    assert firsts(nan["nan_inf"]) == [(5, "nan")] and nan["nan_inf"]["first"][0]["position"] == 1
    words = field(run(module, "words"), "labels")
    assert words["dtype"] == "text" and firsts(words["text"]) == [(0, {"text": "cat"}), (1, {"text": "dog"})]


def test_last_batch_and_batchnorm(module):
    plain = run(module, "lastone")["batches"]
    assert (plain["count"], plain["last_size"], plain["model_has_batchnorm"]) == (3, 1, None)
    with_model = run(module, "lastone", "--model", f"{module}:Net")["batches"]
    assert with_model["model_has_batchnorm"] is True


def test_load_errors_are_reported_not_raised(module):
    result = run(module, "nope")
    assert result["error"]["kind"] == "load"
    assert "has no attribute 'nope'" in result["error"]["message"]
    assert "shuffled" in result["error"]["message"]


def test_per_sample_label_lists_become_rows(module):
    # default_collate turns each sample's [a, b] into two tensors of the batch: stacked back.
    listed = field(run(module, "listed"), "labels")
    assert listed["sample_shape"] == [2] and listed["samples"] == 12 and not listed["varying_shape"]
    assert sorted(firsts(listed["over_bound"]))[:2] == [(2, 5), (3, 6)]
    # A collate_fn that keeps the lists: one row per sample, of its own length.
    ragged = field(run(module, "ragged"), "labels")
    assert ragged["varying_shape"] and ragged["samples"] == 12
    assert (ragged["lengths"]["min"], ragged["lengths"]["max"]) == (1, 3)
    assert ragged["hist"] == [12, 8, 4]


def test_the_items_of_a_batch_are_described(module):
    result = run(module, "no_labels")
    assert not [f for f in result["fields"] if f["role"] == "labels"]
    assert result["structure"] == [
        {"name": "batch['input_ids']", "type": "tensor", "dtype": "int64", "shape": [3, 3]},
        {"name": "batch['cls']", "type": "list", "len": 2,
         "first": {"name": "batch['cls'][0]", "type": "tensor", "dtype": "int64", "shape": [3]}},
    ]


def test_the_document_has_the_fields_of_the_contract(module):
    """The binary reads these fields (src/contract.rs SCAN_FACTS_FIELDS, which tests/contract.rs
    checks against its reader): a scan writes each of them and no other."""
    from assertscope import _contract

    assert sorted(run(module, "shuffled")) == sorted(_contract.SCAN_FACTS_FIELDS)


def test_every_flag_of_the_contract_is_read_by_its_name(module):
    """Each flag the binary passes (src/contract.rs `scan_flag`) sets the value of its name."""
    from assertscope import _contract

    values = {"out": "facts.json", "plan": "{}", "label_key": "y", "input_key": "x", "batch_size": "3",
              "num_workers": "1", "max_batches": "2", "model": "m.py:net"}
    argv = ["data.py:loader"]
    for name, flag in _contract.SCAN_FLAGS.items():
        argv += [flag] if name == "no_progress" else [flag, values[name]]
    args = vars(scan.parse_args(argv))
    assert set(args) == {"target", *_contract.SCAN_FLAGS}
    assert args["no_progress"] is True and args["plan"] == {} and args["batch_size"] == 3
    assert all(str(args[name]) == value for name, value in values.items() if name != "plan")
