"""The dataset index of the bad sample under the loaders that wrap PyTorch's: a batch that is
a Mapping but not a dict (transformers' BatchEncoding), a loader that has already fetched the
next batch when this one fails (accelerate's prepared DataLoader), a bad value made inside
the collate_fn (the batch never reached the user), and a tensor the model derives from the
batch (positions). Each runs a real DataLoader under the guard; a wrong index is worse than
none, so each case also holds the bad value elsewhere in the samples (a token id equal to
the bad label) where a match on the whole sample would name the wrong one."""

import importlib.util

import pytest
from test_origin_loaders import guard_report

needs_accelerate = pytest.mark.skipif(
    importlib.util.find_spec("accelerate") is None or importlib.util.find_spec("transformers") is None,
    reason="needs accelerate and transformers",
)

# 48 samples, labels i % 2 except label 2 at BAD_LABELS; every sample's input ids hold a 2.
SAMPLES = """
import torch
from torch.utils.data import DataLoader
from transformers import BatchEncoding

BAD_LABELS = {5, 30}
rows = [
    {"input_ids": [1, 2, 4 + i % 7, 2], "labels": 2 if i in BAD_LABELS else i % 2}
    for i in range(48)
]

def collate(samples):
    return BatchEncoding({
        "input_ids": torch.tensor([s["input_ids"] for s in samples]),
        "labels": torch.tensor([s["labels"] for s in samples]),
    })

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(16, 8)
        self.head = torch.nn.Linear(8, 2)

    def forward(self, input_ids, labels):
        logits = self.head(self.embed(input_ids).mean(1))
        return torch.nn.functional.cross_entropy(logits, labels)
"""


@needs_accelerate
def test_accelerates_prefetching_loader_names_the_failing_batchs_samples(tmp_path, monkeypatch):
    source = SAMPLES + """
from accelerate import Accelerator

torch.manual_seed(0)
accelerator = Accelerator(cpu=True)
model = Model()
loader = DataLoader(rows, batch_size=8, shuffle=True, collate_fn=collate)
model, loader = accelerator.prepare(model, loader)
for epoch in range(2):
    for batch in loader:
        loss = model(**batch)
"""
    error, report, _ = guard_report(tmp_path, monkeypatch, source)
    indices = report["runtime"]["dataset"]["indices"]
    assert indices and set(indices) <= {5, 30}, indices
    assert error.diagnosis["values"]["dataset_indices"] == indices


def test_a_mapping_batch_is_matched_by_memory_and_by_its_own_field(tmp_path, monkeypatch):
    source = SAMPLES + """
torch.manual_seed(0)
model = Model()
for batch in DataLoader(rows, batch_size=8, shuffle=True, collate_fn=collate):
    loss = model(**batch)
"""
    _, report, _ = guard_report(tmp_path, monkeypatch, source)
    assert set(report["runtime"]["dataset"]["indices"]) <= {5, 30}
    assert report["runtime"]["dataset"]["indices"]


def test_a_bad_value_refused_inside_the_collate_fn_names_the_sample_being_collated(tmp_path, monkeypatch):
    # The refusal happens while the DataLoader builds the batch: no batch was yielded yet,
    # so only the loader's own fetch on the stack knows which samples it is collating.
    source = """
import torch
from torch.utils.data import DataLoader, Dataset

class Tags(Dataset):
    def __init__(self):
        self.tags = [[i % 4, (i + 1) % 4] for i in range(40)]
        self.tags[17] = [1, 4]

    def __len__(self):
        return len(self.tags)

    def __getitem__(self, i):
        return {"x": torch.randn(3), "tags": torch.tensor(self.tags[i])}

def collate(batch):
    targets = torch.zeros(len(batch), 4)
    for row, b in enumerate(batch):
        targets[row].scatter_(0, b["tags"], 1.0)
    return torch.stack([b["x"] for b in batch]), targets

torch.manual_seed(0)
for x, targets in DataLoader(Tags(), batch_size=8, shuffle=True, collate_fn=collate):
    pass
"""
    error, report, _ = guard_report(tmp_path, monkeypatch, source)
    assert report["runtime"]["dataset"]["indices"] == [17]
    assert error.diagnosis["values"]["dataset_indices"] == [17]


def test_positions_the_model_derives_from_the_batch_name_the_long_samples(tmp_path, monkeypatch):
    # The refused tensor (position ids) is made inside the model: no batch holds its memory
    # and no sample holds its values. The batch in use is the one the failing call's frames
    # hold (the embedding's `input_ids`), not the newer one the prefetching loop fetched.
    source = """
import torch
from torch.utils.data import DataLoader

lengths = [5 + i % 6 for i in range(40)]
lengths[13] = lengths[27] = 20
rows = [torch.full((n,), 1 + i % 5) for i, n in enumerate(lengths)]

def pad(batch):
    return {"input_ids": torch.nn.utils.rnn.pad_sequence(batch, batch_first=True)}

def prefetch(loader):
    batches = iter(loader)
    current = next(batches)
    for following in batches:
        yield current
        current = following
    yield current

class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = torch.nn.Embedding(32, 8)
        self.positions = torch.nn.Embedding(16, 8)

    def forward(self, input_ids):
        mask = input_ids.ne(0).long()
        position_ids = torch.cumsum(mask, dim=1) * mask
        return self.tokens(input_ids) + self.positions(position_ids)

torch.manual_seed(0)
model = Encoder()
for batch in prefetch(DataLoader(rows, batch_size=4, shuffle=True, collate_fn=pad)):
    model(**batch)
"""
    error, report, _ = guard_report(tmp_path, monkeypatch, source)
    indices = report["runtime"]["dataset"]["indices"]
    assert indices and set(indices) <= {13, 27}, indices
    assert error.diagnosis["values"]["dataset_indices"] == indices


@needs_accelerate
def test_a_lazy_mapping_among_the_scripts_globals_is_not_run_while_looking_for_holders(tmp_path, monkeypatch):
    # transformers' MODEL_MAPPING is a dict whose items() imports every model class (and
    # raises for one that this installation lacks): reading the frames' locals must not run it.
    source = """
import torch
from torch.utils.data import DataLoader, TensorDataset
from transformers import MODEL_MAPPING

y = torch.arange(64) % 3
y[41] = 3
head = torch.nn.Linear(4, 3)
for xb, yb in DataLoader(TensorDataset(torch.randn(64, 4), y), batch_size=8):
    torch.nn.functional.cross_entropy(head(xb), yb)
"""
    error, report, _ = guard_report(tmp_path, monkeypatch, source)
    assert report["runtime"]["dataset"]["indices"] == [41]
    assert not [e for e in error.diagnosis["evidence"] if "could not be gathered" in e["text"]]


def test_a_batch_that_cannot_be_told_gives_no_index_and_says_why(tmp_path, monkeypatch):
    # The labels are shifted after the batch is copied: no batch shares their memory, no
    # frame holds the batch, and no sample holds the shifted value. Naming the newest
    # batch's samples would be a guess.
    source = """
import torch
from torch.utils.data import DataLoader, TensorDataset

y = torch.arange(64) % 3
head = torch.nn.Linear(4, 3)
for xb, yb in DataLoader(TensorDataset(torch.randn(64, 4), y), batch_size=8, shuffle=True):
    xb, yb = xb.clone(), yb.clone() + 1
    torch.nn.functional.cross_entropy(head(xb), yb)
"""
    error, report, _ = guard_report(tmp_path, monkeypatch, source)
    assert "dataset" not in report["runtime"]
    assert "dataset_indices" not in error.diagnosis["values"]
    notes = [e["text"] for e in error.diagnosis["evidence"] if e["kind"] == "origin"]
    assert any(n.startswith("the dataset indices are not named: no recent batch holds") for n in notes), notes
