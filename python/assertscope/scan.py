"""Iterate a Dataset or DataLoader and gather the facts of every batch before it reaches the GPU.

This is the in-process half of ``assertscope scan``: the CLI runs

    python -m assertscope.scan TARGET --out FACTS.json --plan PLAN [options]

where TARGET is ``path/to/file.py:name`` or ``package.module:name`` naming a Dataset,
a DataLoader, or a zero-argument function returning one, and PLAN (JSON, from the
binary) gives per role (``labels``, ``tokens``, ``inputs``) the bounds to sort values
by, as ``check`` does for a file. This module decides nothing about the data: it
splits each batch into fields (labels, inputs, token ids) and gathers what ``check``'s
readers gather from a column (counts, the class histogram, min/max, shapes, dtypes,
and the first positions of unusual values), with the dataset index of each sample,
also with ``num_workers > 0``: the sampler is wrapped so that the indices of every
batch are recorded as they are handed to the workers, and batches come back in that
order. The binary runs its checks on these facts and renders the findings.

The facts go to the JSON file named by ``--out`` (version ``_contract.SCAN_RESULT_VERSION``),
never to stdout, which belongs to the user's code. Progress goes to stderr. Needs
Python 3.9+ and torch; nothing else.
"""

from __future__ import annotations

import argparse
import collections
import collections.abc
import importlib
import importlib.util
import inspect
import json
import math
import operator
import os
import sys
import time
import traceback

from assertscope import _contract

# The binary's reader keeps as many positions per kind of value (`check::stats`).
KEEP = 10
# Distinct values outside the dense histogram counted one by one, as the binary does.
OUTSIDE_DISTINCT = 4096
TEXT_SHOWN = 40
ROW_SHOWN = 16
LABEL_KEYS = ("labels", "label", "targets", "target", "y")
INPUT_KEYS = ("input_ids", "pixel_values", "inputs", "input", "x", "image", "images", "features")


class ScanError(Exception):
    """The target cannot be loaded or iterated; the message is one line for the user."""


# --------------------------------------------------------------------------- loading


def locate(spec: str):
    """``(where, name, path)`` of ``file.py:name`` (``path`` the file's) or of
    ``package.module:name`` (``path`` None); checked before anything is imported."""
    if ":" not in spec:
        raise ScanError(f"{spec}: name the object as path/to/file.py:name or package.module:name")
    where, name = spec.rsplit(":", 1)
    if not name:
        raise ScanError(f"{spec}: nothing after ':'; name the Dataset, DataLoader or function")
    if where.endswith(".py") or os.sep in where or os.path.isfile(where):
        path = os.path.abspath(where)
        if not os.path.isfile(path):
            raise ScanError(f"{where}: no such file")
        return where, name, path
    return where, name, None


def import_torch():
    """torch, or a one-line error saying which Python lacks it."""
    try:
        import torch
    except ImportError as e:
        raise ScanError(
            f"{sys.executable} cannot import torch ({one_line(e)}): pass --python PATH to the Python that has it"
        ) from None
    return torch


def load_target(spec: str):
    """Imports ``file.py:name`` or ``package.module:name`` and returns the object."""
    where, name, path = locate(spec)
    if path is not None:
        directory = os.path.dirname(path)
        if directory not in sys.path:
            sys.path.insert(0, directory)
        # The module's real name, so that worker processes started with 'spawn' can
        # import it again (and __main__ guards in it do not run).
        module_name = os.path.splitext(os.path.basename(path))[0]
        module_spec = importlib.util.spec_from_file_location(module_name, path)
        if module_spec is None or module_spec.loader is None:
            raise ScanError(f"{where}: cannot be imported as a Python module")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_name] = module
        module_spec.loader.exec_module(module)
    else:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        module = importlib.import_module(where)
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise ScanError(f"{spec}: {where} has no attribute {part!r}; it has: {candidates(module)}")
        obj = getattr(obj, part)
    return obj


def candidates(module) -> str:
    """The module's names that could be scanned, for an error message."""
    from torch.utils.data import DataLoader, Dataset

    names = []
    for key, value in vars(module).items():
        if key.startswith("_"):
            continue
        if isinstance(value, (Dataset, DataLoader)) or (
            inspect.isfunction(value) and getattr(value, "__module__", None) == module.__name__
        ):
            names.append(key)
    return ", ".join(names[:20]) or "no Dataset, DataLoader or function"


def resolve(obj, spec: str):
    """A Dataset or DataLoader from the object, calling it when it is a function."""
    from torch.utils.data import DataLoader, Dataset

    if not isinstance(obj, (Dataset, DataLoader)) and callable(obj):
        try:
            obj = obj()
        except TypeError as e:
            raise ScanError(f"{spec}: calling it with no arguments failed: {e}") from None
    if isinstance(obj, (Dataset, DataLoader)):
        return obj
    if hasattr(obj, "__getitem__") and hasattr(obj, "__len__"):
        return obj
    raise ScanError(f"{spec} is a {type(obj).__name__}, not a Dataset, a DataLoader or a function returning one")


# --------------------------------------------------------------------------- indices


class RecordingBatchSampler:
    """Yields the batches of the wrapped batch sampler and remembers each one's indices."""

    def __init__(self, inner, queue):
        self.inner = inner
        self.queue = queue

    def __iter__(self):
        for batch in self.inner:
            batch = list(batch)
            self.queue.append(batch)
            yield batch

    def __len__(self):
        return len(self.inner)


class RecordingSampler:
    """For loaders without automatic batching: each index is one 'batch'."""

    def __init__(self, inner, queue):
        self.inner = inner
        self.queue = queue

    def __iter__(self):
        for index in self.inner:
            self.queue.append([index])
            yield index

    def __len__(self):
        return len(self.inner)


def recording_loader(loader, queue):
    """A DataLoader equivalent to ``loader`` whose batches' dataset indices are recorded
    in ``queue``, in the order the batches are returned (also with workers), or the
    loader itself when its dataset has no indices (an IterableDataset)."""
    from torch.utils.data import DataLoader, IterableDataset

    if isinstance(loader.dataset, IterableDataset):
        return loader, False
    kwargs = dict(
        num_workers=loader.num_workers,
        collate_fn=loader.collate_fn,
        pin_memory=False,
        timeout=loader.timeout,
        worker_init_fn=loader.worker_init_fn,
        multiprocessing_context=loader.multiprocessing_context,
        generator=loader.generator,
    )
    if loader.num_workers > 0:
        kwargs["prefetch_factor"] = loader.prefetch_factor
    if "in_order" in inspect.signature(DataLoader.__init__).parameters:
        kwargs["in_order"] = True  # batch i must be the i-th recorded index list
    if loader.batch_sampler is not None:
        return DataLoader(loader.dataset, batch_sampler=RecordingBatchSampler(loader.batch_sampler, queue), **kwargs), True
    return DataLoader(loader.dataset, batch_size=None, sampler=RecordingSampler(loader.sampler, queue), **kwargs), True


# --------------------------------------------------------------------------- facts


class Examples:
    """A count of one kind of value and where the first ones are: the first offending
    value of each of the first ``KEEP`` samples that have one (the binary keeps the first
    values of a file the same way)."""

    def __init__(self):
        self.count = 0
        self.first = []

    def add(self, batch, indices, mask, values):
        """``mask`` and ``values`` are ``[B, n]``: which values of each sample count."""
        import torch

        found = int(torch.count_nonzero(mask))
        if not found:
            return
        self.count += found
        if len(self.first) >= KEEP:
            return
        rows = mask.any(1).nonzero().flatten().tolist()
        for row in rows[: KEEP - len(self.first)]:
            position = int(torch.nonzero(mask[row])[0])
            self.first.append(example(batch, indices[row], position if mask.shape[1] > 1 else None, values(row, position)))

    def add_flat(self, batch, indices, width, where, values):
        """Counts the values at flat positions ``where`` (ascending, in a ``[B, width]``
        tensor); ``values`` are the values there."""
        found = where.numel()
        if not found:
            return
        self.count += found
        if len(self.first) >= KEEP:
            return
        rows = (where // width).tolist() if width else [0] * found
        seen = set()
        for k, row in enumerate(rows):
            if row in seen:
                continue
            seen.add(row)
            position = int(where[k]) - row * width
            self.first.append(example(batch, indices[row], position if width > 1 else None, int(values[k])))
            if len(self.first) >= KEEP:
                break

    def add_lazily(self, batch, indices, found, mask, values):
        """``add`` for a count known without the mask: ``mask()`` is built only while
        first positions are still wanted."""
        if not found:
            return
        if len(self.first) >= KEEP:
            self.count += found
            return
        self.add(batch, indices, mask(), values)

    def add_each(self, batch, indices, rows, value):
        """Counts whole samples ``rows`` (a list of row numbers), ``value(row)`` describing each."""
        self.count += len(rows)
        for row in rows[: max(0, KEEP - len(self.first))]:
            self.first.append(example(batch, indices[row], None, value(row)))

    def to_json(self):
        return {"count": self.count, "first": self.first}


def example(batch, index, position, value):
    return {"batch": batch, "index": index, "position": position, "value": value}


def number(v):
    """A JSON number; NaN and infinities as the strings the binary reads back."""
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
    return v


def text_value(value):
    text = value if isinstance(value, str) else repr(value)
    return {"text": text[:TEXT_SHOWN] + ("…" if len(text) > TEXT_SHOWN else "")}


class Bounds:
    """What the binary fixed before reading (as for a file): the dense histogram's
    length, the exclusive upper bound, the ignore index, the longest allowed sequence,
    whether rows of several values are classified as one-hot / multi-hot, and whether
    floats are sorted at all."""

    def __init__(self, plan):
        plan = plan or {}
        self.hist_len = int(plan.get("hist_len", 0))
        self.upper = plan.get("upper")
        self.ignore = plan.get("ignore")
        self.max_positions = plan.get("max_positions")
        self.row_patterns = bool(plan.get("row_patterns", False))
        # Whether floats are sorted into whole numbers (class ids) and the rest; the
        # binary judges model inputs only for NaN/inf and emptiness.
        self.sort_floats = bool(plan.get("sort_floats", True))


class FieldFacts:
    """Everything ``check`` learns from a column, learned from one field of every batch:
    the same counts, extremes and first positions, with dataset indices for rows."""

    # Each kind of value whose first positions are kept, as in the binary's `Stats`.
    KINDS = ("negative", "over_bound", "non_integer", "nan_inf", "text", "too_long", "empty", "one_hot", "multi_hot")

    def __init__(self, name, role, bounds):
        self.name, self.role, self.bounds = name, role, bounds
        self.dtype = self.sample_shape = self.hist = None
        self.varying_shape = False
        self.samples = self.ignored = self.whole_floats = self.finite_floats = 0
        self.float_min = self.float_max = None
        # Integer values outside the dense histogram: exact counts of the first distinct ones.
        self.outside = collections.Counter()
        self.outside_summary = {"count": 0, "min": None, "max": None, "overflowed": False}
        self.lengths = {"rows": 0, "min": None, "max": 0, "total": 0}
        self.patterns = {"rows": 0, "binary": 0, "zeros": 0}
        self.examples = {kind: Examples() for kind in self.KINDS}

    # One batch of this field -------------------------------------------------

    def add(self, batch, value, indices):
        """``value`` is the field's ``[B, ...]`` tensor (or list) for the samples ``indices``."""
        import torch

        if not torch.is_tensor(value):
            value = self.as_tensor(batch, value, indices)
            if value is None:
                return
        if self.dtype is None:
            self.dtype = str(value.dtype).replace("torch.", "")
        rows = value.shape[0]
        shape = list(value.shape[1:])
        if self.sample_shape is None:
            self.sample_shape = shape
        elif shape != self.sample_shape:
            self.varying_shape = True
        self.samples += rows
        flat = value.reshape(rows, -1)
        if len(shape) >= 1:
            self.add_lengths(batch, flat, shape, indices)
        if flat.shape[1] == 0:
            return
        if value.is_complex():
            finite = torch.isfinite(flat)
            self.examples["nan_inf"].add(batch, indices, ~finite, lambda r, p: number(complex(flat[r, p]).real))
        elif value.is_floating_point():
            self.add_floats(batch, flat, indices)
        else:
            self.add_ints(batch, flat.reshape(-1).long(), None, flat.shape[1], indices)
        if self.bounds.row_patterns and len(shape) == 1 and flat.shape[1] > 1:
            self.add_patterns(batch, flat, indices)

    def as_tensor(self, batch, value, indices):
        """A list (strings, numbers) as a tensor, or its items recorded as text."""
        import torch

        items = list(value) if isinstance(value, (list, tuple)) else [value]
        if self.dtype is None:
            self.dtype = "text" if all(isinstance(i, str) for i in items) else type(value).__name__
        if items and not any(isinstance(i, str) for i in items):
            try:
                return torch.as_tensor(items)
            except (TypeError, ValueError, RuntimeError):
                pass
        self.samples += len(items)
        self.examples["text"].add_each(batch, indices, list(range(len(items))), lambda r: text_value(items[r]))
        return None

    def add_lengths(self, batch, flat, shape, indices):
        length = flat.shape[1]
        rows = flat.shape[0]
        lengths = self.lengths
        lengths["rows"] += rows
        lengths["total"] += rows * length
        lengths["min"] = length if lengths["min"] is None else min(lengths["min"], length)
        lengths["max"] = max(lengths["max"], length)
        if length == 0:
            self.examples["empty"].add_each(batch, indices, list(range(rows)), lambda r: {"len": 0})
        sequence = shape[-1]
        if self.bounds.max_positions is not None and len(shape) == 1 and sequence > self.bounds.max_positions:
            self.examples["too_long"].add_each(batch, indices, list(range(rows)), lambda r: {"len": sequence})

    def add_floats(self, batch, flat, indices):
        import torch

        finite = torch.isfinite(flat)
        all_finite = bool(finite.all())
        if not all_finite:
            self.examples["nan_inf"].add(batch, indices, ~finite, lambda r, p: number(float(flat[r, p])))
        values = flat if all_finite else flat[finite]
        if values.numel() == 0:
            return
        self.finite_floats += values.numel()
        low, high = torch.aminmax(values)
        low, high = float(low), float(high)
        self.float_min = low if self.float_min is None else min(self.float_min, low)
        self.float_max = high if self.float_max is None else max(self.float_max, high)
        if not self.bounds.sort_floats:
            return
        # frac() of NaN and inf is NaN, so `whole` holds finite values only.
        whole = torch.frac(flat) == 0
        where = torch.nonzero(whole.reshape(-1)).flatten()
        wholes = flat.reshape(-1)[where]
        huge = wholes.abs() >= 9.0e18  # past int64: counted as non-integers
        if bool(huge.any()):
            whole.reshape(-1)[where[huge]] = False
            where, wholes = where[~huge], wholes[~huge]
        self.whole_floats += where.numel()
        self.examples["non_integer"].add_lazily(
            batch, indices, values.numel() - where.numel(), lambda: finite & ~whole, lambda r, p: number(float(flat[r, p]))
        )
        if where.numel():
            self.add_ints(batch, wholes.long(), where, flat.shape[1], indices)

    def add_ints(self, batch, values, where, width, indices):
        """Integer values into the dense histogram, and the rest counted one by one and
        sorted, as the binary's reader does: the ignore index, negative, past the bound.
        ``values`` is 1-D; ``where`` their flat positions in the ``[B, width]`` field (None:
        every position, in order)."""
        import torch

        b = self.bounds
        inside = (values >= 0) & (values < b.hist_len)
        counted = values[inside]
        if counted.numel():
            counts = torch.bincount(counted, minlength=0)
            if self.hist is None:
                self.hist = torch.zeros(b.hist_len, dtype=torch.long)
            self.hist[: counts.numel()] += counts
        if counted.numel() == values.numel():
            return
        outside = ~inside
        others = values[outside]
        at = torch.nonzero(outside).flatten()
        if where is not None:
            at = where[at]
        unique, counts = torch.unique(others, return_counts=True)
        summary = self.outside_summary
        summary["count"] += int(counts.sum())
        low, high = int(unique[0]), int(unique[-1])
        summary["min"] = low if summary["min"] is None else min(summary["min"], low)
        summary["max"] = high if summary["max"] is None else max(summary["max"], high)
        for v, c in zip(unique.tolist(), counts.tolist()):
            if v in self.outside or len(self.outside) < OUTSIDE_DISTINCT:
                self.outside[v] += c
            else:
                summary["overflowed"] = True
        ignored = others == b.ignore if b.ignore is not None else torch.zeros_like(others, dtype=torch.bool)
        self.ignored += int(torch.count_nonzero(ignored))
        negative = ~ignored & (others < 0)
        self.examples["negative"].add_flat(batch, indices, width, at[negative], others[negative])
        if b.upper is not None:
            over = ~ignored & (others >= b.upper)
            self.examples["over_bound"].add_flat(batch, indices, width, at[over], others[over])

    def add_patterns(self, batch, flat, indices):
        """Rows of 0/1 with one 1 (one-hot), several (multi-hot) or none."""
        values = flat.double()
        binary = ((values == 0) | (values == 1)).all(1)
        ones = (values == 1).sum(1)
        p = self.patterns
        p["rows"] += flat.shape[0]
        p["binary"] += int(binary.sum())
        p["zeros"] += int((binary & (ones == 0)).sum())

        def row(r):
            return {"row": [number(v) for v in values[r, :ROW_SHOWN].tolist()]}

        self.examples["one_hot"].add_each(batch, indices, (binary & (ones == 1)).nonzero().flatten().tolist(), row)
        self.examples["multi_hot"].add_each(batch, indices, (binary & (ones > 1)).nonzero().flatten().tolist(), row)

    def to_json(self):
        hist = [] if self.hist is None else self.hist.tolist()
        while hist and hist[-1] == 0:
            hist.pop()
        kept = {kind: examples.to_json() for kind, examples in self.examples.items()}
        lengths = dict(self.lengths, too_long=kept.pop("too_long"), empty=kept.pop("empty"))
        patterns = dict(self.patterns, one_hot=kept.pop("one_hot"), multi_hot=kept.pop("multi_hot"))
        return dict(
            kept,
            name=self.name,
            role=self.role,
            dtype=self.dtype,
            sample_shape=self.sample_shape,
            varying_shape=self.varying_shape,
            samples=self.samples,
            hist=hist,
            outside=dict(self.outside_summary, distinct=sorted(self.outside.items())),
            ignored=self.ignored,
            whole_floats=self.whole_floats,
            finite_floats=self.finite_floats,
            float_min=self.float_min,
            float_max=self.float_max,
            lengths=lengths,
            patterns=patterns,
        )


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


def model_has_batchnorm(spec):
    """Whether the model named by ``--model`` has a BatchNorm layer; None without one."""
    if spec is None:
        return None
    import torch

    model = load_target(spec)
    if not isinstance(model, torch.nn.Module) and callable(model):
        model = model()
    if not isinstance(model, torch.nn.Module):
        raise ScanError(f"{spec} is a {type(model).__name__}, not an nn.Module")
    return any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in model.modules())


def dataset_indices(indices):
    """The recorded indices as ints, or None when the sampler yields something else."""
    try:
        return [operator.index(i) if not hasattr(i, "item") else int(i.item()) for i in indices]
    except (TypeError, ValueError):
        return None


# --------------------------------------------------------------------------- progress


class Progress:
    """One line on a terminal's stderr, redrawn at most ten times a second: batches done,
    samples/s and the time left. Nothing at all when stderr is not a terminal, so that
    logs and pipes get only the report."""

    def __init__(self, total, enabled):
        self.total = total
        self.enabled = enabled and sys.stderr.isatty()
        self.last = 0.0
        self.start = time.monotonic()

    def update(self, done, samples):
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.last < 0.1 and done != self.total:
            return
        self.last = now
        elapsed = max(now - self.start, 1e-9)
        rate = samples / elapsed
        if self.total:
            width = 30
            filled = int(width * done / self.total)
            bar = "#" * filled + "." * (width - filled)
            left = elapsed * (self.total - done) / done
            text = (
                f"\rscan: batch {done}/{self.total} [{bar}] {100 * done // self.total:3d}%"
                f"  {rate:,.0f} samples/s  ETA {duration(left)}"
            )
        else:
            text = f"\rscan: batch {done}  {rate:,.0f} samples/s"
        sys.stderr.write(text + "\033[K")
        sys.stderr.flush()

    def close(self, done, samples):
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.start
        sys.stderr.write(f"\r\033[Kscan: {done} batches, {samples:,} samples in {duration(elapsed)}\n")
        sys.stderr.flush()


def duration(seconds):
    """ "42s", "3m07s", "1h02m" """
    seconds = int(seconds + 0.5)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


# --------------------------------------------------------------------------- main


def scan(args) -> dict:
    locate(args.target)
    import_torch()
    from torch.utils.data import DataLoader

    result = {"version": _contract.SCAN_RESULT_VERSION, "target": args.target, "error": None}
    obj = resolve(load_target(args.target), args.target)
    if isinstance(obj, DataLoader):
        loader = obj
        result["kind"] = "DataLoader"
    else:
        loader = DataLoader(obj, batch_size=args.batch_size, num_workers=args.num_workers, shuffle=False)
        result["kind"] = type(obj).__name__
    has_bn = model_has_batchnorm(args.model)
    queue = collections.deque()
    batch_size = loader.batch_size
    unbatched = loader.batch_size is None and loader.batch_sampler is None
    loader, recorded = recording_loader(loader, queue)
    result.update(
        {
            "batch_size": batch_size,
            "num_workers": loader.num_workers,
            "indices": "dataset" if recorded else "iteration",
        }
    )
    try:
        total = len(loader)
    except TypeError:
        total = None
    if args.max_batches is not None and total is not None:
        total = min(total, args.max_batches)
    gatherer = Gatherer(args, args.plan, unbatched)
    progress = Progress(total, not args.no_progress)
    done = 0
    iterator = iter(loader)
    while args.max_batches is None or done < args.max_batches:
        try:
            batch = next(iterator)
        except StopIteration:
            break
        except ScanError:
            raise
        except Exception as e:  # the user's dataset or collate_fn failed
            indices = list(queue[0]) if recorded and queue else None
            where = f"batch {done}" + (f" (dataset indices {short_list(indices)})" if indices else "")
            result["error"] = {
                "kind": "iterate",
                "message": f"{args.target}: loading {where} raised {type(e).__name__}: {one_line(e)}",
                "batch": done,
                "traceback": traceback.format_exc(),
            }
            break
        indices = dataset_indices(queue.popleft()) if recorded else None
        gatherer.add(done, batch, indices)
        done += 1
        progress.update(done, gatherer.samples)
    progress.close(done, gatherer.samples)
    result.update(gatherer.to_json(has_bn))
    return result


def short_list(values, shown=8):
    text = ", ".join(str(v) for v in values[:shown])
    return text + (f", … ({len(values)} in all)" if len(values) > shown else "")


def one_line(e) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="python -m assertscope.scan", description=__doc__.splitlines()[0])
    ap.add_argument("target", help="path/to/file.py:name or package.module:name")
    ap.add_argument("--out", required=True, help="where to write the facts (JSON)")
    ap.add_argument("--plan", type=json.loads, default={}, help="per role (labels, tokens, inputs), the bounds (JSON)")
    ap.add_argument("--label-key", help="dict key or tuple position of the labels")
    ap.add_argument("--input-key", help="dict key or tuple position of the inputs")
    ap.add_argument("--batch-size", type=int, default=64, help="for a Dataset target")
    ap.add_argument("--num-workers", type=int, default=0, help="for a Dataset target")
    ap.add_argument("--max-batches", type=int)
    ap.add_argument("--model", help="module:name of the model (or a function returning it), to know if it uses BatchNorm")
    ap.add_argument("--no-progress", action="store_true")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        result = scan(args)
    except ScanError as e:
        result = {"version": _contract.SCAN_RESULT_VERSION, "target": args.target, "error": {"kind": "load", "message": str(e)}}
    except ImportError as e:
        # A module the target imports is missing: its name says it all.
        result = {
            "version": _contract.SCAN_RESULT_VERSION,
            "target": args.target,
            "error": {"kind": "load", "message": f"{args.target}: import failed: {one_line(e)}"},
        }
    except Exception as e:
        result = {
            "version": _contract.SCAN_RESULT_VERSION,
            "target": args.target,
            "error": {
                "kind": "load",
                "message": f"{args.target}: loading it raised {type(e).__name__}: {one_line(e)}",
                "traceback": traceback.format_exc(),
            },
        }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
