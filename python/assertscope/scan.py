"""Iterate a Dataset or DataLoader and check every batch before it reaches the GPU.

This is the in-process half of ``assertscope scan``: the CLI runs

    python -m assertscope.scan TARGET --out FINDINGS.json [options]

where TARGET is ``path/to/file.py:name`` or ``package.module:name`` naming a Dataset,
a DataLoader, or a zero-argument function returning one. Every batch is checked
(labels integer, in range and 1-D; input and label batch sizes equal; no NaN/inf in
float tensors; no empty tensors; a last batch of one sample for BatchNorm), and the
dataset index of each bad sample is reported, also with ``num_workers > 0``: the
sampler is wrapped so that the indices of every batch are recorded as they are handed
to the workers, and batches come back in that order.

Findings go to the JSON file named by ``--out``, never to stdout, which belongs to the
user's code. Progress goes to stderr. Needs Python 3.9+ and torch; nothing else.
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
import os
import sys
import time
import traceback

from assertscope import _contract, kb

KEEP = 10
LABEL_KEYS = ("labels", "label", "targets", "target", "y")
INPUT_KEYS = ("input_ids", "pixel_values", "inputs", "input", "x", "image", "images", "features")
CE_IGNORE_INDEX = -100


class ScanError(Exception):
    """The target cannot be loaded or iterated; the message is one line for the user."""


# --------------------------------------------------------------------------- loading


def load_target(spec: str):
    """Imports ``file.py:name`` or ``package.module:name`` and returns the object."""
    if ":" not in spec:
        raise ScanError(f"{spec}: name the object as path/to/file.py:name or package.module:name")
    where, name = spec.rsplit(":", 1)
    if not name:
        raise ScanError(f"{spec}: nothing after ':'; name the Dataset, DataLoader or function")
    if where.endswith(".py") or os.sep in where or os.path.isfile(where):
        path = os.path.abspath(where)
        if not os.path.isfile(path):
            raise ScanError(f"{where}: no such file")
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


# --------------------------------------------------------------------------- checks


class Finding:
    def __init__(self, cause: str, check: str, severity: str, message: str):
        self.cause = cause
        self.check = check
        self.severity = severity
        self.message = message
        self.count = 0
        self.batches = []
        self.examples = []
        self.values = {}

    def add(self, batch: int, indices, values):
        """Records bad samples: dataset indices and their offending values."""
        self.count += len(indices)
        if batch not in self.batches and len(self.batches) < KEEP:
            self.batches.append(batch)
        for index, value in zip(indices, values):
            if len(self.examples) >= KEEP:
                break
            self.examples.append({"batch": batch, "index": index, "value": value})

    def to_json(self):
        return {
            "cause": self.cause,
            "check": self.check,
            "severity": self.severity,
            "message": self.message,
            "count": self.count,
            "batches": self.batches,
            "examples": self.examples,
            "values": self.values,
        }


class Scanner:
    def __init__(self, args):
        self.args = args
        self.findings = collections.OrderedDict()
        self.label_min = None
        self.label_max = None
        self.label_dtype = None
        self.label_name = None
        self.class_counts = None
        # Labels outside the class histogram (negative ids, the ignore index): value -> count.
        self.other_counts = collections.Counter()
        self.samples = 0
        self.batch_sizes = []

    def finding(self, cause, check, severity, message) -> Finding:
        key = (cause, check)
        if key not in self.findings:
            self.findings[key] = Finding(cause, check, severity, message)
        return self.findings[key]

    # Which tensor is which ------------------------------------------------------

    def split(self, batch):
        """(inputs, label): inputs is a list of (name, tensor), label a (name, tensor) or None."""
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

    # One batch ------------------------------------------------------------------

    def check(self, batch_no: int, batch, indices):
        import torch

        inputs, label = self.split(batch)
        size = None
        if inputs and inputs[0][1].dim() > 0:
            size = inputs[0][1].shape[0]
        elif label is not None and torch.is_tensor(label[1]) and label[1].dim() > 0:
            size = label[1].shape[0]
        if size is not None:
            self.batch_sizes.append(int(size))
            self.samples += int(size)
        if indices is None:
            start = self.samples - (size or 0)
            indices = list(range(start, start + (size or 0)))
        for name, t in inputs + ([label] if label is not None and torch.is_tensor(label[1]) else []):
            self.check_tensor(batch_no, name, t, indices)
        if label is not None:
            self.check_label(batch_no, label, inputs, indices)
        if self.args.vocab_size is not None or self.args.max_positions is not None:
            self.check_tokens(batch_no, inputs, indices)

    def check_tensor(self, batch_no, name, t, indices):
        import torch

        if t.numel() == 0:
            f = self.finding("empty-tensor", f"empty:{name}", "error", f"{name} is empty (shape {list(t.shape)})")
            f.add(batch_no, indices[:1], [list(t.shape)])
            return
        if t.is_floating_point() or t.is_complex():
            finite = torch.isfinite(t)
            if not bool(finite.all()):
                bad = per_sample(~finite, len(indices))
                f = self.finding("nan-inf", f"nan:{name}", "error", f"{name} holds NaN or infinite values")
                rows = bad.nonzero().flatten().tolist()
                f.add(batch_no, [indices[i] for i in rows], [describe_bad(t, i, ~finite) for i in rows])

    def check_label(self, batch_no, label, inputs, indices):
        import torch

        args = self.args
        name, y = label
        if not torch.is_tensor(y):
            f = self.finding("target-dtype", "label-type", "error", f"{name} is a {type(y).__name__}, not a tensor")
            f.add(batch_no, indices[:1], [repr(y)[:40]])
            return
        self.label_name = name
        self.label_dtype = str(y.dtype)
        task = args.task
        if inputs and inputs[0][1].dim() > 0 and y.dim() > 0 and inputs[0][1].shape[0] != y.shape[0]:
            x_name, x = inputs[0]
            f = self.finding(
                "batch-size-mismatch",
                "batch-size",
                "error",
                f"{x_name} has {x.shape[0]} samples but {name} has {y.shape[0]}",
            )
            f.values.update({"input_batch": int(x.shape[0]), "target_batch": int(y.shape[0])})
            f.add(batch_no, indices[:1], [f"{list(x.shape)} vs {list(y.shape)}"])
        if task in ("binary", "multilabel"):
            self.check_binary(batch_no, name, y, indices)
            return
        if task == "tokens":
            return
        if y.is_floating_point():
            whole = bool((y == y.round()).all()) if bool(torch.isfinite(y).all()) else False
            what = "whole-number class ids" if whole else "values that are not class ids"
            f = self.finding("target-dtype", "label-float", "error", f"{name} is {y.dtype} holding {what}; class targets must be torch.int64 (.long())")
            f.add(batch_no, indices[:1], [str(y.dtype)])
            if not whole:
                return
            y = y[torch.isfinite(y)].long()
        elif y.dtype == torch.bool or y.dtype not in (torch.int64,):
            if y.dtype in (torch.int8, torch.int16, torch.int32, torch.uint8, torch.bool):
                f = self.finding("target-dtype", "label-int", "error", f"{name} is {y.dtype}; cross_entropy/nll_loss need torch.int64 (.long())")
                f.add(batch_no, indices[:1], [str(y.dtype)])
            y = y.long()
        if task == "classification" and y.dim() == 2:
            if y.shape[1] == 1:
                f = self.finding("target-shape", "label-n1", "error", f"{name} has shape [B, 1]. {kb.hint('target-n-by-1')}")
                f.add(batch_no, indices[:1], [list(y.shape)])
            elif bool(((y == 0) | (y == 1)).all()):
                hot = (y == 1).sum(1)
                kind = "one-hot" if bool((hot == 1).all()) else "multi-hot"
                fix = kb.hint("target-one-hot") if kind == "one-hot" else kb.hint("multi-hot-rows") + " Scan them with --task multilabel."
                f = self.finding("target-shape", "label-onehot", "error", f"{name} rows are {kind} vectors of width {y.shape[1]}, not class indices. {fix}")
                f.add(batch_no, indices[:1], [list(y.shape)])
                return
        self.check_range(batch_no, name, y, indices)

    def check_range(self, batch_no, name, y, indices):
        import torch

        args = self.args
        if y.numel() == 0:
            return
        ignore = args.ignore_index if args.ignore_index is not None else CE_IGNORE_INDEX
        valid = y != ignore
        lo = int(y[valid].min()) if bool(valid.any()) else None
        hi = int(y[valid].max()) if bool(valid.any()) else None
        if lo is not None:
            self.label_min = lo if self.label_min is None else min(self.label_min, lo)
            self.label_max = hi if self.label_max is None else max(self.label_max, hi)
        bound = args.num_classes
        counted = y[valid & (y >= 0)]
        if counted.numel():
            counts = torch.bincount(counted.flatten(), minlength=bound or 0)
            if counts.numel() <= 100000:
                self.add_counts(counts)
        others = y[~valid | (y < 0)]
        if others.numel():
            values, counts = torch.unique(others, return_counts=True)
            self.other_counts.update(dict(zip(values.tolist(), counts.tolist())))
        negative = valid & (y < 0)
        if bool(negative.any()):
            bad = per_sample(negative, len(indices))
            f = self.finding("target-out-of-range", "label-negative", "error", f"{name} holds negative class ids (ignore_index is {ignore})")
            rows = bad.nonzero().flatten().tolist()
            f.add(batch_no, [indices[i] for i in rows], [first_value(y, i, negative) for i in rows])
        if bound is not None:
            over = valid & (y >= bound)
            if bool(over.any()):
                bad = per_sample(over, len(indices))
                f = self.finding("target-out-of-range", "label-range", "error", f"{name} holds class ids >= num_classes {bound}")
                f.values["bound"] = bound
                rows = bad.nonzero().flatten().tolist()
                f.add(batch_no, [indices[i] for i in rows], [first_value(y, i, over) for i in rows])

    def check_binary(self, batch_no, name, y, indices):
        yf = y.float()
        outside = (yf < 0) | (yf > 1)
        if bool(outside.any()):
            bad = per_sample(outside, len(indices))
            f = self.finding("bce-input-range", "label-binary", "error", f"{name} holds targets outside [0, 1]")
            rows = bad.nonzero().flatten().tolist()
            f.add(batch_no, [indices[i] for i in rows], [first_value(yf, i, outside) for i in rows])
        if self.args.task == "multilabel" and self.args.num_classes is not None and y.dim() == 2 and y.shape[1] != self.args.num_classes:
            f = self.finding("target-shape", "label-width", "error", f"{name} has {y.shape[1]} columns but num_classes is {self.args.num_classes}")
            f.add(batch_no, indices[:1], [list(y.shape)])

    def check_tokens(self, batch_no, inputs, indices):
        import torch

        args = self.args
        ids = next(((n, t) for n, t in inputs if not t.is_floating_point() and t.dtype != torch.bool), None)
        if ids is None:
            return
        name, t = ids
        if args.vocab_size is not None and t.numel():
            bad = (t < 0) | (t >= args.vocab_size)
            if bool(bad.any()):
                rows = per_sample(bad, len(indices)).nonzero().flatten().tolist()
                f = self.finding("embedding-index-out-of-range", "token-range", "error", f"{name} holds token ids outside 0..{args.vocab_size - 1} (vocab size {args.vocab_size})")
                f.values["bound"] = args.vocab_size
                f.add(batch_no, [indices[i] for i in rows], [first_value(t, i, bad) for i in rows])
        if args.max_positions is not None and t.dim() >= 2 and t.shape[-1] > args.max_positions:
            f = self.finding("index-out-of-bounds", "token-length", "error", f"{name} has sequences of length {t.shape[-1]} > max positions {args.max_positions}")
            f.values["bound"] = args.max_positions
            f.add(batch_no, indices[: t.shape[0]], [int(t.shape[-1])] * min(len(indices), t.shape[0]))

    def add_counts(self, counts):
        counts = counts.tolist()
        if self.class_counts is None:
            self.class_counts = counts
            return
        if len(counts) > len(self.class_counts):
            self.class_counts.extend([0] * (len(counts) - len(self.class_counts)))
        for i, c in enumerate(counts):
            self.class_counts[i] += c

    def finish(self, model_has_batchnorm):
        """Checks that need the whole pass: the size of the last batch."""
        if len(self.batch_sizes) >= 2 and self.batch_sizes[-1] == 1:
            severity = "error" if model_has_batchnorm else "warning"
            why = "the model uses BatchNorm" if model_has_batchnorm else "BatchNorm in training mode fails on it"
            f = self.finding(
                "batchnorm-single-sample",
                "last-batch",
                severity,
                f"the last batch has 1 sample ({self.samples} samples, batch size {self.batch_sizes[0]}); {why}: pass drop_last=True",
            )
            f.add(len(self.batch_sizes) - 1, [], [])
            f.count = 1


def per_sample(mask, batch):
    """A [batch] boolean tensor: which samples have any True in ``mask``."""
    if mask.dim() == 0:
        return mask.reshape(1)
    if mask.shape[0] != batch:
        return mask.reshape(-1).any().reshape(1)
    return mask.reshape(batch, -1).any(1)


def first_value(t, row, mask):
    """The first offending value of sample ``row``, as a JSON number."""
    if t.dim() == 0:
        return number(t.item())
    sample, sample_mask = t[row], mask[row]
    value = sample[sample_mask].flatten()[0] if sample.dim() else sample
    return number(value.item())


def describe_bad(t, row, mask):
    sample = t[row] if t.dim() else t
    m = mask[row] if mask.dim() else mask
    n = int(m.sum()) if m.dim() else 1
    value = sample[m].flatten()[0].item() if m.dim() else sample.item()
    return f"{n} non-finite (first {number(value)})"


def number(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if v.is_integer():
            return int(v)
    return v


def model_has_batchnorm(spec):
    if spec is None:
        return False
    import torch

    model = load_target(spec)
    if not isinstance(model, torch.nn.Module) and callable(model):
        model = model()
    if not isinstance(model, torch.nn.Module):
        raise ScanError(f"{spec} is a {type(model).__name__}, not an nn.Module")
    return any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in model.modules())


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
    import torch  # noqa: F401  (fail early, with the right message, without torch)
    from torch.utils.data import DataLoader

    result = {"version": _contract.SCAN_RESULT_VERSION, "target": args.target, "findings": [], "error": None}
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
    scanner = Scanner(args)
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
                "indices": indices,
                "traceback": traceback.format_exc(),
            }
            break
        indices = queue.popleft() if recorded else None
        scanner.check(done, batch, indices)
        done += 1
        progress.update(done, scanner.samples)
    progress.close(done, scanner.samples)
    if result["error"] is None:
        scanner.finish(has_bn)
    result.update(
        {
            "batches": done,
            "samples": scanner.samples,
            "label": {
                "name": scanner.label_name,
                "dtype": scanner.label_dtype,
                "min": scanner.label_min,
                "max": scanner.label_max,
                "class_counts": scanner.class_counts,
                "other_counts": sorted(scanner.other_counts.items()),
                "ignore_index": args.ignore_index if args.ignore_index is not None else CE_IGNORE_INDEX,
            },
            "findings": [f.to_json() for f in scanner.findings.values()],
        }
    )
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
    ap.add_argument("--out", required=True, help="where to write the findings (JSON)")
    ap.add_argument("--num-classes", type=int)
    ap.add_argument("--vocab-size", type=int)
    ap.add_argument("--max-positions", type=int)
    ap.add_argument("--ignore-index", type=int)
    ap.add_argument("--task", choices=["classification", "binary", "multilabel", "segmentation", "tokens"])
    ap.add_argument("--label-key", help="dict key or tuple position of the labels")
    ap.add_argument("--input-key", help="dict key or tuple position of the inputs")
    ap.add_argument("--batch-size", type=int, default=64, help="for a Dataset target")
    ap.add_argument("--num-workers", type=int, default=0, help="for a Dataset target")
    ap.add_argument("--max-batches", type=int)
    ap.add_argument("--model", help="module:name of the model (or a function returning it), to know if it uses BatchNorm")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    if args.task is None:
        args.task = "tokens" if args.vocab_size is not None and args.num_classes is None else "classification"
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        result = scan(args)
    except ScanError as e:
        result = {"version": _contract.SCAN_RESULT_VERSION, "target": args.target, "findings": [], "error": {"kind": "load", "message": str(e)}}
    except ImportError as e:
        result = {
            "version": _contract.SCAN_RESULT_VERSION,
            "target": args.target,
            "findings": [],
            "error": {"kind": "load", "message": f"{args.target}: import failed: {one_line(e)}", "traceback": traceback.format_exc()},
        }
    except Exception as e:
        result = {
            "version": _contract.SCAN_RESULT_VERSION,
            "target": args.target,
            "findings": [],
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
