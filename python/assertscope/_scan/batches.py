"""Each batch split into its fields, and the facts of the batches themselves: their sizes, where
inputs and labels disagree, and what the first batch holds."""

from __future__ import annotations

import collections.abc

from .fields import KEEP, Bounds, FieldFacts
from .loading import ScanError

LABEL_KEYS = ("labels", "label", "targets", "target", "y")
INPUT_KEYS = ("input_ids", "pixel_values", "inputs", "input", "x", "image", "images", "features")


class Gatherer:
    """Splits each batch into its fields and gathers their facts, plus the batch
    structure: the sizes of the batches and where inputs and labels disagree."""

    def __init__(self, args, plan, unbatched):
        self.args = args
        self.plan = plan
        self.unbatched = unbatched
        self.fields = collections.OrderedDict()
        self.samples = 0
        self.batch_count = 0
        self.first_size = None
        self.last_size = None
        self.mismatches = {"count": 0, "first": []}
        # The items of the first batch, so that labels not found can be looked for.
        self.structure = None

    def field(self, name, role) -> FieldFacts:
        if name not in self.fields:
            self.fields[name] = FieldFacts(name, role, Bounds(self.plan.get(role)))
        return self.fields[name]

    def split(self, batch):
        """(inputs, label): inputs is a list of (name, tensor), label a (name, value) or None."""
        import torch

        args = self.args
        if isinstance(batch, collections.abc.Mapping):
            keys = list(batch.keys())
            label_key = args.label_key if args.label_key is not None else next((k for k in LABEL_KEYS if k in batch), None)
            if label_key is not None and label_key not in batch:
                raise ScanError(f"the batches are dicts without the key {label_key!r}; they have: {', '.join(map(str, keys))}")
            label = (f"batch[{label_key!r}]", batch[label_key]) if label_key is not None else None
            inputs = [(f"batch[{k!r}]", v) for k, v in batch.items() if k != label_key and torch.is_tensor(v)]
            first = args.input_key if args.input_key is not None else next((k for k in INPUT_KEYS if k in batch), None)
            if first is not None and first in batch:
                inputs.sort(key=lambda item: item[0] != f"batch[{first!r}]")
            return inputs, label
        if isinstance(batch, (tuple, list)):
            label_at = int(args.label_key) if args.label_key is not None else (1 if len(batch) >= 2 else None)
            input_at = int(args.input_key) if args.input_key is not None else 0
            if label_at is not None and label_at >= len(batch):
                raise ScanError(f"the batches have {len(batch)} items, so there is no label at position {label_at}")
            label = (f"batch[{label_at}]", batch[label_at]) if label_at is not None else None
            inputs = [(f"batch[{i}]", v) for i, v in enumerate(batch) if i != label_at and torch.is_tensor(v)]
            inputs.sort(key=lambda item: item[0] != f"batch[{input_at}]")
            return inputs, label
        if torch.is_tensor(batch):
            return [("batch", batch)], None
        raise ScanError(f"a batch is a {type(batch).__name__}; scan understands tensors, tuples/lists and dicts of tensors")

    def add(self, batch_no, batch, indices):
        import torch

        if self.structure is None:
            self.structure = structure(batch)
        inputs, label = self.split(batch)
        if self.unbatched:
            # Without automatic batching each "batch" is one sample: give it a batch dimension.
            inputs = [(n, t.unsqueeze(0)) for n, t in inputs]
            if label is not None:
                label = (label[0], label[1].unsqueeze(0) if torch.is_tensor(label[1]) else [label[1]])
        else:
            inputs = [(n, t.unsqueeze(0) if t.dim() == 0 else t) for n, t in inputs]
            if label is not None and torch.is_tensor(label[1]) and label[1].dim() == 0:
                label = (label[0], label[1].unsqueeze(0))
        first = inputs[0] if inputs else None
        # The samples of the batch: as many as the sampler handed out, else as the first field has.
        if indices is not None:
            size = len(indices)
        else:
            size = sample_count(first[1]) if first is not None else (sample_count(label[1]) if label is not None else 0)
            indices = list(range(self.samples, self.samples + size))
        self.samples += size
        self.batch_count += 1
        if self.first_size is None:
            self.first_size = size
        self.last_size = size
        tokens = self.token_field(inputs)
        for name, t in inputs:
            if sample_count(t) != size:
                continue  # another batch dimension: its rows are not these samples
            self.field(name, "tokens" if name == tokens else "inputs").add(batch_no, t, indices)
        if label is None:
            return
        name, y = label
        y = per_sample_rows(y, size)
        if first is not None and sample_count(y) != sample_count(first[1]):
            self.mismatch(batch_no, first, (name, y), indices)
        if sample_count(y) != size:
            return
        labels = self.field(name, "labels")
        if isinstance(y, list) and y and all(torch.is_tensor(row) for row in y):
            for row, index in zip(y, indices):  # ragged: one sample at a time
                labels.add(batch_no, row.unsqueeze(0), [index])
        else:
            labels.add(batch_no, y, indices)

    def token_field(self, inputs):
        """The input holding token ids (the first integer one) when a vocabulary size is given."""
        if "tokens" not in self.plan:
            return None
        return next((n for n, t in inputs if not t.is_floating_point() and not t.is_complex() and str(t.dtype) != "torch.bool"), None)

    def mismatch(self, batch_no, first, label, indices):
        self.mismatches["count"] += 1
        if len(self.mismatches["first"]) < KEEP:
            self.mismatches["first"].append(
                {
                    "batch": batch_no,
                    "index": indices[0] if indices else None,
                    "input": first[0],
                    "input_samples": sample_count(first[1]),
                    "label": label[0],
                    "label_samples": sample_count(label[1]),
                }
            )

    def to_json(self, model_has_batchnorm):
        return {
            "batches": {
                "count": self.batch_count,
                "samples": self.samples,
                "first_size": self.first_size,
                "last_size": self.last_size,
                "model_has_batchnorm": model_has_batchnorm,
                "size_mismatches": self.mismatches,
            },
            "fields": [f.to_json() for f in self.fields.values()],
            "structure": self.structure or [],
        }


def per_sample_rows(y, size):
    """Labels that are a list per sample, as rows: ``default_collate`` turns B samples of
    L labels each into L tensors of B (stacked back into ``[B, L]``), and a ``collate_fn``
    that keeps them gives B lists or 1-D tensors, of one length (stacked) or of several
    (a list of rows). Anything else is returned as it is."""
    import torch

    if not isinstance(y, (list, tuple)) or not y:
        return y
    if len(y) != size and all(torch.is_tensor(t) and t.dim() == 1 and t.shape[0] == size for t in y):
        return torch.stack(list(y), dim=1)
    if len(y) != size or not all(isinstance(t, (list, tuple)) or (torch.is_tensor(t) and t.dim() >= 1) for t in y):
        return y
    try:
        rows = [t.reshape(-1) if torch.is_tensor(t) else torch.as_tensor(t).reshape(-1) for t in y]
    except (TypeError, ValueError, RuntimeError):
        return y  # text, or nested deeper: recorded as it is
    if len({(row.shape[0], row.dtype) for row in rows}) == 1:
        return torch.stack(rows)
    return rows


def structure(batch):
    """What one batch holds, item by item: name, type, dtype and shape (lists by length
    and first item), for a report that found no labels to check."""
    import torch

    def describe(name, value, depth=0):
        item = {"name": name, "type": type(value).__name__}
        if torch.is_tensor(value):
            item.update(type="tensor", dtype=str(value.dtype).replace("torch.", ""), shape=list(value.shape))
        elif isinstance(value, (list, tuple)):
            item["len"] = len(value)
            if value and depth == 0:
                item["first"] = describe(f"{name}[0]", value[0], 1)
        return item

    if isinstance(batch, collections.abc.Mapping):
        items = [(f"batch[{k!r}]", v) for k, v in batch.items()]
    elif isinstance(batch, (tuple, list)):
        items = [(f"batch[{i}]", v) for i, v in enumerate(batch)]
    else:
        items = [("batch", batch)]
    return [describe(name, value) for name, value in items[:32]]


def sample_count(value):
    shape = getattr(value, "shape", None)
    if shape is not None:
        return int(shape[0]) if len(shape) else 1
    return len(value) if isinstance(value, (list, tuple)) else 1

