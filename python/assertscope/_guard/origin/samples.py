"""The offending samples: bad positions of a failing tensor -> the batch it came from -> the
dataset indices of the samples that hold them.

What: the batches the DataLoader yielded last (loader.py) are searched for the one whose
tensors share the failing tensor's memory (the batch itself, a view, a slice of it); a bad
entry's position maps to its sample's slot in that batch, and the slot to the index the
sampler chose for it. When no batch shares the memory (the batch was copied to the GPU, or
rebuilt), the newest batches are candidates and the re-read (reread.py) confirms one.
Why: "label 7 at dataset index 4213" is what the user looks up; the op that used it is not.
Cost: error path only.
"""

import math

import torch

from .facts import mapping_items

MAX_SAMPLES = 4  # bad samples named (and re-read) per failure


def matched(value, wanted):
    """The first of the `wanted` numbers that `value` is or holds (a scalar, a tensor, an
    array, or a list/tuple of scalars), else None. NaN matches NaN."""
    if isinstance(value, bool) or not wanted:
        return None
    nan = any(isinstance(w, float) and math.isnan(w) for w in wanted)
    if isinstance(value, (int, float)):
        if nan and isinstance(value, float) and math.isnan(value):
            return value
        return next((w for w in wanted if w == value), None)
    if isinstance(value, torch.Tensor):
        if value.numel() == 0 or value.numel() > 1 << 22 or value.is_complex() or value.is_meta:
            return None
        flat = value.detach().reshape(-1)
        if nan and flat.is_floating_point() and bool(flat.isnan().any()):
            return float("nan")
        return next((w for w in wanted if bool((flat == w).any())), None)
    shape = getattr(value, "shape", None)
    if shape is not None and hasattr(value, "dtype") and hasattr(value, "__array__") and type(value).__module__.startswith("numpy"):
        try:
            if value.size > 1 << 22:
                return None
            return next((w for w in wanted if bool((value == w).any())), None)
        except Exception:  # noqa: BLE001 - an array of objects we cannot compare
            return None
    if isinstance(value, (list, tuple)) and len(value) <= 4096:
        for item in value:
            if isinstance(item, (int, float)) and not isinstance(item, bool):
                found = matched(item, wanted)
                if found is not None:
                    return found
    return None


def holding(value, predicate, depth=2):
    """True when `value`, or an item of it (tuples, lists, dicts, `depth` levels), satisfies
    `predicate`."""
    if predicate(value):
        return True
    pairs = mapping_items(value) if depth else None
    if pairs is not None:
        return any(holding(item, predicate, depth - 1) for _, item in pairs[:64])
    if depth and isinstance(value, (list, tuple)):
        return any(holding(item, predicate, depth - 1) for item in list(value)[:64])
    return False


def sample_of(subject, position, batch_size):
    """The slot, inside the batch, of the sample that holds entry `position` of `subject`
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


def candidates(subject, positions, records):
    """[(record, indices, path)] of the recent batches the bad entries can come from, most
    likely first: the batches holding the subject's memory, else every recent one.
    `indices` are the bad samples' dataset indices in that batch (at most MAX_SAMPLES);
    `path` is, for a batch holding the subject's memory, the keys and positions of the
    batch's tensor that does (`("labels",)`, `(1,)`), else None."""
    found = []
    shared = _holding(records, subject)
    pool = [r for r, _ in shared] or records
    for record in pool:
        slots = []
        for position in positions:
            slot = sample_of(subject, position, len(record.indices))
            if slot is not None and slot < len(record.indices) and slot not in slots:
                slots.append(slot)
        if slots:
            path = next((p for r, p in shared if r is record), None)
            found.append((record, [record.indices[s] for s in slots][:MAX_SAMPLES], path))
    return found


def in_use(records, subject, start, max_frames=64):
    """The one recent batch the failing call is working on, for a subject the model derived
    from it (position ids from `input_ids`): the innermost frame on the stack from `start`
    whose locals hold a tensor of exactly one recent batch (by memory) names it. A prefetching
    loop holds the next batch only in its suspended generator, never on the stack. None when
    no frame holds one, when a frame holds several (a list of batches for accumulation), or
    when the subject is not batch-major like that batch (leading size = its sample count)."""
    if subject.dim() == 0:
        return None
    owners = {}
    for record in records:
        if subject.shape[0] != len(record.indices):
            continue
        for _, leaf in record.live_leaves():
            pointer = storage_of(leaf)
            if pointer:
                owners.setdefault(pointer, set()).add(id(record))
    if not owners:
        return None
    frame, seen = start, 0
    while frame is not None and seen < max_frames:
        held = set()
        for value in list(frame.f_locals.values()):
            for tensor in _tensors(value):
                held |= owners.get(storage_of(tensor), set())
        if len(held) == 1:
            return next(r for r in records if id(r) in held)
        if held:
            return None
        frame, seen = frame.f_back, seen + 1
    return None


def _tensors(value, depth=2):
    if isinstance(value, torch.Tensor):
        yield value
    elif depth:
        pairs = mapping_items(value)
        items = [item for _, item in pairs] if pairs is not None else value if isinstance(value, (list, tuple)) else ()
        for item in list(items)[:64]:
            yield from _tensors(item, depth - 1)


def _holding(records, subject):
    """[(record, path)] of the batches that hold the subject's memory (the tensor itself or
    a view of it), with the path of the tensor that does. A loader that prefetches, as
    accelerate's DataLoaderShard under the Hugging Face Trainer or Lightning's fetcher, has
    already yielded the next batch when this one fails: the newest batch is then not the
    failing one, and memory tells them apart."""
    pointer = storage_of(subject)
    if not pointer:
        return []
    found = []
    for record in records:
        path = next((path for path, leaf in record.live_leaves() if storage_of(leaf) == pointer), None)
        if path is not None:
            found.append((record, path))
    return found


def storage_of(tensor):
    """The address of a tensor's storage, or None (meta, fake, no storage)."""
    try:
        return tensor.untyped_storage().data_ptr() or None
    except Exception:  # noqa: BLE001
        return None


def field(sample, path):
    """The part of one sample that the default collate (and collators that keep keys) puts
    at `path` of the batch: `sample["labels"]` for `batch["labels"]`, `sample[1]` for
    `batch[1]`; None when the sample has no such part."""
    for key in path:
        try:
            pairs = mapping_items(sample)
            if pairs is not None:
                sample = dict(pairs).get(key)
            elif isinstance(sample, (list, tuple)) and isinstance(key, int) and -len(sample) <= key < len(sample):
                sample = sample[key]
            else:
                return None
        except Exception:  # noqa: BLE001 - a sample type whose reads we cannot trust
            return None
        if sample is None:
            return None
    return sample


def summary(sample, depth=2):
    """One line for a sample, lovely-tensors style: `(tensor[4] f32 min=-1.2 max=0.8, 3)`,
    `{input_ids: tensor[8] i64 min=1 max=49, labels: tensor i64 3}`."""
    if isinstance(sample, torch.Tensor):
        return _tensor_line(sample)
    if depth and isinstance(sample, dict):
        parts = [f"{key}: {summary(value, depth - 1)}" for key, value in list(sample.items())[:16]]
        return "{" + ", ".join(parts) + "}"
    if depth and isinstance(sample, (list, tuple)):
        parts = [summary(value, depth - 1) for value in list(sample)[:16]]
        return ("(" + ", ".join(parts) + ")") if isinstance(sample, tuple) else ("[" + ", ".join(parts) + "]")
    if isinstance(sample, (bool, int, float)) or sample is None:
        return _number(sample)
    if isinstance(sample, str):
        return repr(sample[:40] + ("…" if len(sample) > 40 else ""))
    shape = getattr(sample, "shape", None)
    if shape is not None and hasattr(sample, "dtype"):
        return f"{type(sample).__name__}[{', '.join(map(str, shape))}] {sample.dtype}"
    return type(sample).__name__


def _tensor_line(tensor):
    from ..._summary import dtype_name

    shape = f"tensor[{', '.join(map(str, tensor.shape))}]" if tensor.dim() else "tensor"
    head = f"{shape} {dtype_name(tensor.dtype)}"
    if tensor.numel() == 0 or tensor.is_complex() or tensor.is_meta:
        return head
    t = tensor.detach()
    if t.dim() == 0:
        return f"{head} {_number(t.item())}"
    if t.dtype == torch.bool:
        return f"{head} true={int(t.sum())}"
    low, high = torch.aminmax(t.float() if t.is_floating_point() else t)
    text = f"{head} min={_number(low.item())} max={_number(high.item())}"
    if t.is_floating_point():
        nan = int(t.isnan().sum())
        text += f" nan={nan}" if nan else ""
    return text


def _number(value):
    from ..._summary import number

    return number(value)
