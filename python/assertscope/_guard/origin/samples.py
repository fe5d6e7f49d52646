"""The offending samples: bad positions in a batch -> dataset indices, confirmed by reading
`dataset[i]` again under a tracer that names the user's line that produced the bad value.

What: a bad entry's position maps to its sample through the batch's sampler indices; the
sample is re-read (the transform and `__getitem__` run again, traced), and when the sample
does not hold the bad value the user's collate_fn is re-run on the batch's samples instead.
Why: "label 7 at dataset index 4213, made by `y = int(row[2])` in __getitem__" is the line
to change; the op that used the label is not.
Cost: error path only; the tracer runs for that single re-read and is removed after.
"""

import sys

import torch

from ... import _frames

MAX_SAMPLES = 4  # samples re-read and traced


def matches_value(value, wanted):
    """True when `value` is or holds one of the `wanted` numbers (a scalar, a tensor, an array,
    or a list/tuple of scalars)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return value in wanted
    if isinstance(value, torch.Tensor):
        if value.numel() == 0 or value.numel() > 1 << 22 or value.is_complex():
            return False
        flat = value.detach().reshape(-1)
        return any(bool((flat == w).any()) for w in wanted)
    shape = getattr(value, "shape", None)
    if shape is not None and hasattr(value, "dtype") and hasattr(value, "__array__"):
        try:
            return any(bool((value == w).any()) for w in wanted)
        except Exception:  # noqa: BLE001 - an array-like we do not understand
            return False
    if isinstance(value, (list, tuple)) and len(value) <= 4096:
        return any(isinstance(v, (int, float)) and not isinstance(v, bool) and v in wanted for v in value)
    return False


def _within(value, predicate, depth):
    if predicate(value):
        return 0
    if depth and isinstance(value, (list, tuple, dict)):
        items = value.values() if isinstance(value, dict) else value
        for k, item in enumerate(list(items)[:64]):
            if _within(item, predicate, depth - 1) is not None:
                return k
    return None


class _Tracer:
    """Records the first user line after which a local, or a returned value, satisfies the
    predicate: the line that made the bad value."""

    def __init__(self, predicate):
        self.predicate = predicate
        self.hit = None  # (file, line, function, element of a returned tuple or None)
        self.seen = {}
        self.last = {}

    def _fingerprint(self, value):
        return (id(value), getattr(value, "_version", None) if isinstance(value, torch.Tensor) else None)

    def start(self, frame, event, arg):
        if self.hit is not None or event != "call" or not _frames.is_user_file(frame.f_code.co_filename):
            return None
        self.seen[frame] = {k: self._fingerprint(v) for k, v in frame.f_locals.items()}
        self.last[frame] = frame.f_lineno
        return self.step

    def step(self, frame, event, arg):
        if self.hit is not None:
            return None
        state = self.seen.setdefault(frame, {})
        previous = self.last.get(frame)
        code = frame.f_code
        if event in ("line", "return"):
            for name, value in list(frame.f_locals.items()):
                fingerprint = self._fingerprint(value)
                if state.get(name) == fingerprint:
                    continue
                state[name] = fingerprint
                if previous is not None and not isinstance(value, dict) and self.predicate(value):
                    self.hit = (code.co_filename, previous, code.co_name, None)
                    return None
            if event == "return" and _within(arg, self.predicate, 2) is not None:
                element = None
                if isinstance(arg, tuple):
                    element = next((k for k, item in enumerate(arg) if _within(item, self.predicate, 1) is not None), None)
                self.hit = (code.co_filename, frame.f_lineno, code.co_name, element)
                return None
            self.last[frame] = frame.f_lineno
        return self.step


def traced(function, predicate):
    """(result, hit) of function() run under the tracer; hit is None when no user line made
    a matching value. The previous tracer (a debugger, coverage) is restored after."""
    tracer = _Tracer(predicate)
    previous = sys.gettrace()
    sys.settrace(tracer.start)
    try:
        result = function()
    finally:
        sys.settrace(previous)
    return result, tracer.hit


def sample_of(subject, position, batch_size):
    """The position of the sample inside the batch that holds entry `position` of `subject`
    (batch-major layouts: [B, ...] or a flattened [B * T]); None when it cannot be told."""
    if subject.dim() == 0 or batch_size <= 0:
        return None
    if subject.shape[0] == batch_size:
        return position[0] if position else None
    if subject.numel() % batch_size:
        return None
    flat = 0
    for size, coordinate in zip(subject.shape, position):
        flat = flat * size + coordinate
    return flat // (subject.numel() // batch_size)


def find(subject, positions, predicate, records, busy):
    """Maps bad entries to dataset samples through the recent batches, newest first, and
    confirms them by reading the samples again. Returns a dict with `indices` (dataset
    indices, confirmed), `record` (the batch), `hit` (file, line, function, element) and
    `by` ("dataset" or "collate_fn"), or None."""
    for record in _holding(records, subject):
        in_batch = []
        for position in positions:
            sample = sample_of(subject, position, len(record.indices))
            if sample is not None and sample < len(record.indices) and sample not in in_batch:
                in_batch.append(sample)
        if not in_batch:
            continue
        indices = [record.indices[s] for s in in_batch][:MAX_SAMPLES]
        with busy():
            for index in indices:
                try:
                    sample, hit = traced(lambda: record.dataset[index], predicate)
                except Exception:  # noqa: BLE001 - a dataset that cannot be read twice
                    break
                if _within(sample, predicate, 2) is not None:
                    confirmed = [i for i in indices if _holds(record.dataset, i, predicate)]
                    return {"indices": confirmed or [index], "record": record, "hit": hit, "by": "dataset"}
            collate = record.collate_fn
            code = getattr(collate, "__code__", None)
            if code is not None and _frames.is_user_file(code.co_filename):
                try:
                    samples = [record.dataset[i] for i in record.indices]
                    _, hit = traced(lambda: collate(samples), predicate)
                except Exception:  # noqa: BLE001
                    hit = None
                if hit is not None:
                    return {"indices": indices, "record": record, "hit": hit, "by": "collate_fn"}
    return None


def _holding(records, subject):
    """The batches that hold the subject's memory (the tensor itself or a view of it), or all
    of them when none does (a batch copied to the GPU). A loader that prefetches, as
    accelerate's DataLoaderShard under the Hugging Face Trainer, has already yielded the next
    batch when this one fails: the newest batch is then not the failing one."""
    try:
        pointer = subject.untyped_storage().data_ptr()
    except Exception:  # noqa: BLE001 - a tensor without storage (meta, fake)
        return records
    if not pointer:
        return records

    def holds(record):
        for leaf in record.live_leaves():
            try:
                if leaf.untyped_storage().data_ptr() == pointer:
                    return True
            except Exception:  # noqa: BLE001
                continue
        return False

    holding = [record for record in records if holds(record)]
    return holding or records


def _holds(dataset, index, predicate):
    try:
        return _within(dataset[index], predicate, 2) is not None
    except Exception:  # noqa: BLE001
        return False
