"""The facts of one field of the batches (labels, token ids, inputs), sorted by the bounds of
the plan as check's readers sort a column's values."""

from __future__ import annotations

import collections
import math

# The binary's reader keeps as many positions per kind of value (`check::stats`).
KEEP = 10
# Distinct values outside the dense histogram counted one by one, as the binary does.
OUTSIDE_DISTINCT = 4096
TEXT_SHOWN = 40
ROW_SHOWN = 16


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
