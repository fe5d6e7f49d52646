"""The report's `runtime` block for one guard failure: every fact the origin engine needs
that only the failing process knows (see the origin protocol, section 1).

What: the failing call's frames and operand (facts.py), the DataLoader batch and the dataset
indices of the bad samples with the chain of datasets (samples.py, chain.py), the bad sample
read once more with line events (reread.py), the dataset's tables read at the bad index
(live.py), and for size causes the module whose size the data broke with its construction
stack (modules.py).
Why: the engine proves the path from the source; these facts anchor it to what ran.
Cost: error path only, and never raising: a fact that cannot be gathered is left out, and
a failure of the gathering itself becomes a note of the diagnosis.
"""

import sys

from ... import _frames
from . import chain, facts, live, loader, modules, reread, samples

VERSION = 1

_CLASS_LOSSES = ("cross_entropy", "nll_loss", "multi_margin_loss", "multilabel_margin_loss")
_HEADS = ("Linear", "LazyLinear", "Bilinear", "Conv1d", "Conv2d", "Conv3d")
# Causes where every sample is bad (a float dtype, a per-sample shape): the re-read shows
# where the value was made, but no index singles out a sample.
_EVERY_SAMPLE = ("target-dtype", "target-shape")


class Facts:
    """What one failure's gathering found: the runtime block, the numbers it adds to the
    diagnosis' values, hints drawn from runtime facts alone, and notes on what failed."""

    def __init__(self):
        self.runtime = {"version": VERSION}
        self.values = {}
        self.hints = []
        self.notes = []


def bad_values(finding):
    values = finding.values or {}
    bad = values.get("distinct_bad_values") or values.get("bad_values") or []
    return [v for v in bad if isinstance(v, (int, float)) and not isinstance(v, bool)]


def _predicate(finding, subject):
    """holds(value) -> what a sample carrying the offending value holds, or None."""
    cause = finding.cause
    per_sample = tuple(subject.shape[1:])
    if cause == "target-shape" and subject.dim() >= 2:

        def shaped(value):
            shape = tuple(getattr(value, "shape", ()) or ())
            return list(shape) if hasattr(value, "dtype") and shape == per_sample else None

        return shaped
    if cause == "target-dtype":

        def floating(value):
            if isinstance(value, float):
                return value if not per_sample else None
            is_float = getattr(value, "is_floating_point", None)
            ok = callable(is_float) and is_float() and tuple(value.shape) == per_sample
            return str(value.dtype).replace("torch.", "") if ok else None

        return floating
    wanted = bad_values(finding)
    if not wanted:
        return None
    return lambda value: samples.matched(value, wanted)


def gather(check, call, rule, finding, location, start=None):
    """The Facts of one op check's failure (never raising)."""
    found = Facts()
    try:
        frames(found, location, start or sys._getframe(1), rule.tensor)
        operand = facts.operand(call, rule.tensor)
        if operand is not None:
            found.runtime["operand"] = operand
        holds = _predicate(finding, rule.tensor)
        if holds is not None:
            dataset(found, finding, rule.tensor, holds, start or sys._getframe(1))
        built = size_modules(check, call, finding, start or sys._getframe(1))
        if built:
            found.runtime["modules"] = built
        finish(found)
    except Exception as error:  # noqa: BLE001 - the facts are extra: never hide the real error
        failed(found, error)
    return found


def failed(found, error):
    found.notes.append(f"the origin facts could not be gathered: {type(error).__name__}: {error}")


def frames(found, location, start, tensor):
    """The `process_start` and `frames` fields (`tensor`: the one whose holders are named)."""
    found.runtime["process_start"] = facts.process_start()
    found.runtime["frames"] = facts.frame_entries(facts.live_frames(location, start), tensor, location)


def finish(found):
    """The `sources` field: the text of every file named so far that is not on disk."""
    runtime = found.runtime
    files = [f["file"] for f in runtime.get("frames", ())] + [o["file"] for o in runtime.get("observed", ())]
    files += [s["file"] for m in runtime.get("modules", ()) for s in m["sites"]]
    sources = facts.sources(files)
    if sources:
        runtime["sources"] = sources


def site(where):
    filename, line, function = where
    return {"file": facts.absolute(filename), "line": line, "function": function}


def dataset(found, finding, subject, holds, start=None):
    """The `dataset`, `observed` and `live` fields, and the dataset indices in the values."""
    positions = (finding.values or {}).get("positions") or []
    if not positions and subject.dim() >= 1:
        positions = [[0]]
    every_sample = finding.cause in _EVERY_SAMPLE
    building = loader.fetching(start, subject) if start is not None else None
    records = [building] if building is not None else loader.recent()
    found_batch = candidates = samples.candidates(subject, positions, records)
    if candidates and candidates[0][2] is None and start is not None:
        # No batch holds the subject's memory: the batch the failing frames hold, if one.
        used = samples.in_use(records, subject, start)
        found_batch = [c for c in candidates if c[0] is used]
    for attempt, (record, indices, path) in enumerate(found_batch or candidates):
        if attempt >= 2:  # without shared memory, each candidate costs one more read
            break
        shared = path is not None or bool(found_batch and found_batch is not candidates)
        levels = chain.unwrap(record.dataset, indices[0])
        read = reread.read(record.dataset, indices[0], holds, [obj for obj, _ in levels])
        observed, by = read.observed, None
        if read.read and samples.holding(_own_field(read.sample, path), lambda v: holds(v) is not None):
            by = "dataset"
        elif read.read and _is_user(record.collate_fn):
            batch, collated, note = reread.collate(record.collate_fn, read.sample, holds)
            if samples.holding(batch, lambda v: holds(v) is not None, 3):
                by, observed = "collate_fn", observed + collated
            elif note:
                found.notes.append(note)
        if read.note:
            found.notes.append(read.note)
        if by is None and not shared:
            continue
        _record_dataset(found, record, indices, levels, read, every_sample)
        if observed:
            found.runtime["observed"] = observed
        reads = live.read(levels, bad_values(finding))
        if reads:
            found.runtime["live"] = reads
        return
    if candidates and not every_sample:
        found.notes.append(
            "the dataset indices are not named: no recent batch holds the failing tensor's memory, no frame of the "
            "failing call holds one of their tensors, and the samples read again do not hold the bad value"
        )


def _own_field(sample, path):
    """The part of a re-read sample to look for the bad value in: the field the failing
    tensor came from when the batch is known and the sample has it (a label of 2 is not
    confirmed by a token id of 2), else the whole sample."""
    if not path:
        return sample
    part = samples.field(sample, path)
    return sample if part is None else part


def _record_dataset(found, record, indices, levels, read, every_sample):
    block = {}
    if not every_sample:
        block["indices"] = indices
        found.values["dataset_indices"] = indices
    block["batch_step"] = record.step
    found.values["batch_step"] = record.step
    if record.steps:
        block["batches_in_epoch"] = record.steps
        found.values["batches_in_epoch"] = record.steps
    built_at = loader.loader_site(record)
    if built_at is not None:
        block["loader"] = site(built_at[1])
    block["chain"] = [level for _, level in levels]
    code = getattr(record.collate_fn, "__code__", None) if _is_user(record.collate_fn) else None
    block["collate"] = (
        {"file": facts.absolute(code.co_filename), "line": code.co_firstlineno, "function": code.co_name} if code else None
    )
    if read.read:
        block["sample"] = samples.summary(read.sample)
    found.runtime["dataset"] = block
    if isinstance(record.step, int) and record.step >= 5 and not every_sample:
        found.hints.append(
            f"the first bad value came at step {record.step}"
            + (f" of {record.steps}" if record.steps else "")
            + f" (dataset index {indices[0]}) after {record.step - 1} clean batches: a rare class or a late cohort of the "
            "data, not an offset of every label"
        )


def _is_user(function):
    code = getattr(function, "__code__", None)
    return code is not None and _frames.is_user_file(code.co_filename)


def module_entry(built, role, size_argument=None, need=None):
    """One `modules` entry from a Built record."""
    entry = {"role": role, "class": built.base, "description": built.describe()}
    if size_argument is not None:
        entry["size_argument"] = size_argument
        entry["size"] = built.get(size_argument)
    if need is not None:
        entry["need"] = need
    entry["sites"] = [site(where) for where in built.sites]
    return entry


def _class_head(logits, classes):
    """The layer that made the logits: through the autograd graph, else the one recorded
    layer of that output size, when there is only one."""
    found = modules.producer_of(logits, _HEADS)
    if found is not None:
        return found
    sized = [b for b in modules.recorded(_HEADS) if (b.get("out_features") or b.get("out_channels")) == classes]
    return sized[0] if len(sized) == 1 else None


def size_modules(check, call, finding, start):
    """The `modules` field: the module whose size the bad values broke (size causes)."""
    values = finding.values or {}
    top = values.get("max")
    need = top + 1 if isinstance(top, int) else None
    op = check.op
    found = []
    if op in _CLASS_LOSSES and finding.cause == "target-out-of-range":
        classes = values.get("classes")
        head = _class_head(call.get("input"), classes) if classes else None
        if head is not None and need is not None and need > classes:
            size = "out_features" if head.get("out_features") is not None else "out_channels"
            found.append(module_entry(head, "head", size, need))
        loss = module_in_stack(("CrossEntropyLoss", "NLLLoss"), start)
        if loss is not None and any(v < 0 for v in bad_values(finding)):
            found.append(module_entry(loss, "loss", "ignore_index"))
    elif op in ("embedding", "embedding_bag"):
        weight = call.get("weight") if call.has("weight") else None
        if weight is None and op == "embedding":
            weight = call.get("input")
        owner = modules.owner_of(weight) if weight is not None else None
        if owner is not None and need is not None and need > weight.shape[0]:
            found.append(module_entry(owner, "embedding", "num_embeddings", need))
    elif op == "ctc_loss":
        log_probs = call.get("log_probs")
        head = _class_head(log_probs, log_probs.shape[-1])
        if head is not None and need is not None and need > log_probs.shape[-1]:
            size = "out_features" if head.get("out_features") is not None else "out_channels"
            found.append(module_entry(head, "head", size, need))
    return found


def module_in_stack(kind_names, start):
    """The Built record of the tracked module whose forward is running (the `self` of a
    frame on the stack) of one of the given types, or None."""
    import torch.nn as nn

    frame = start
    while frame is not None:
        candidate = frame.f_locals.get("self") if frame.f_code.co_name in ("forward", "_call_impl") else None
        if isinstance(candidate, nn.Module) and any(c.__name__ in kind_names for c in type(candidate).__mro__):
            return modules.built(candidate)
        frame = frame.f_back
    return None
