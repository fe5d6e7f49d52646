"""Error-path helpers: where the bad values sit, how many there are, what they look like.

Everything here runs only after a check failed, so it may read values from the device.
"""

import torch

from .._contract import interval, positions_text

SHOWN = 5  # positions listed in a message


def locate(tensor, bad):
    """(count, first values, first positions) of the True entries of `bad` in `tensor`."""
    t = tensor.detach()
    bad = bad.expand(t.shape) if bad.shape != t.shape else bad
    count = int(bad.sum())
    index = torch.nonzero(bad)[:SHOWN]
    positions = index.tolist()
    values = [t[tuple(p)].item() for p in positions] if t.dim() else ([t.item()] if count else [])
    return count, values, positions


def range_report(tensor, low, high, ignore=None):
    """Facts about the entries of an integer tensor outside [low, high), `ignore` excepted.

    Returns (found_suffix, values): `found_suffix` reads "10 at [3], 10 at [17]"; `values`
    holds min, max (of the entries that count), bound, bad_count, numel, positions, bad_values.
    """
    t = tensor.detach()
    bad = t < low
    if high is not None:
        bad = bad | (t >= high)
    counted = t.reshape(-1)
    if ignore is not None:
        bad = bad & (t != ignore)
        counted = counted[counted != ignore]
    count, values, positions = locate(t, bad)
    low_seen = counted.min().item() if counted.numel() else None
    high_seen = counted.max().item() if counted.numel() else None
    facts = {
        "min": low_seen,
        "max": high_seen,
        "bound": high,
        "bad_count": count,
        "numel": t.numel(),
        "positions": positions,
        "bad_values": values,
    }
    if low != 0:
        facts["low"] = low
    if ignore is not None:
        facts["ignore_index"] = ignore
    distinct = torch.unique(t[bad]).tolist()[: SHOWN + 1] if count else []
    facts["distinct_bad_values"] = distinct
    return positions_text(values, positions, count), facts


_PLURALS = {"index": "indices", "entry": "entries", "probability": "probabilities"}


def plural(count, noun):
    return noun if count == 1 else _PLURALS.get(noun, noun + "s")


def looks_one_based(facts, classes):
    """min 1 and max == C: labels numbered from 1."""
    return facts["min"] == 1 and facts["max"] == classes


def looks_like_positions(tensor):
    """Each row counts up by one (0, 1, 2, ...): position ids rather than token ids."""
    t = tensor.detach()
    if t.dim() == 0 or t.shape[-1] < 2:
        return False
    steps = t[..., 1:] - t[..., :-1]
    return bool((steps == 1).all())
