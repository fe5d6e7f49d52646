"""Rules: the conditions a CUDA kernel asserts, each on one argument of a call.

A rule answers the same question two ways:
  passes()      synchronously, as a Python bool (reads the device: one host sync on CUDA);
  bad()         as a boolean tensor on the argument's device, without any host sync;
and, for the asynchronous mode, says how to repair the argument so the real kernel never
sees a bad value (`repaired(bad)`): out-of-range indices become a safe index, bad
probabilities a safe probability. Repairs are only visible when the guard will raise.
"""

import torch

from . import _verified

__all__ = [
    "Rule",
    "RangeRule",
    "UnitIntervalRule",
    "ProbabilityRowsRule",
    "MaskedScatterRule",
    "OffsetsRule",
    "RepeatsRule",
    "UsedTargetsRule",
    "SumRule",
]


def _item(tensor):
    # The original Tensor.item: the patched one is a poll point of the async guard.
    return torch._C.TensorBase.item(tensor)


class Rule:
    """One condition on the argument `arg` (the tensor `tensor`) of a call."""

    __slots__ = ("arg", "tensor", "host_list")
    host = False  # True: known from shapes alone, checked at once in every mode

    def __init__(self, arg, tensor, host_list=False):
        self.arg = arg
        self.tensor = tensor
        # The argument was a Python list/tuple (lengths of ctc_loss): repairs give one back.
        self.host_list = host_list

    def passes(self):
        return not bool(_item(self.bad().any()))

    def known_to_pass(self):
        """True if the rule is known to hold without reading the device (see RangeRule)."""
        return False

    def evaluate(self):
        """passes(), once known_to_pass() said False."""
        return self.passes()

    def confirmed(self):
        """Called once the asynchronous verdict of this rule came back clean."""

    def bad(self):
        raise NotImplementedError

    def repaired(self, bad):
        raise NotImplementedError

    def repaired_argument(self, bad):
        value = self.repaired(bad)
        return value.tolist() if self.host_list else value


_INTEGER_LIMITS = {}


def _limits(dtype):
    limits = _INTEGER_LIMITS.get(dtype)
    if limits is None:
        info = torch.iinfo(dtype)
        limits = _INTEGER_LIMITS[dtype] = (info.min, info.max)
    return limits


def distinct(tensor):
    """The tensor without its expanded (stride-0) dimensions: the same values, each read once
    (an index broadcast with .expand() over 16 columns is checked as one column)."""
    strides = tensor.stride()
    if 0 not in strides:
        return tensor
    for dim, (size, stride) in enumerate(zip(tensor.shape, strides)):
        if stride == 0 and size > 1:
            tensor = tensor.narrow(dim, 0, 1)
    return tensor


class RangeRule(Rule):
    """Every entry lies in [low, high) (high None: no upper bound), except `ignore`.

    A range once read is remembered for the tensor's region and version (_verified): a
    tensor reused unchanged is not read again.
    """

    __slots__ = ("low", "high", "ignore", "fill", "found")

    def __init__(self, arg, tensor, low, high, ignore=None, fill=0, host_list=False):
        self.arg = arg
        self.tensor = tensor
        self.host_list = host_list
        if ignore is not None and not tensor.dtype.is_floating_point:
            smallest, largest = _limits(tensor.dtype)
            if not smallest <= ignore <= largest:
                ignore = None  # e.g. ignore_index=-100 with uint8 targets: no value can equal it
        self.low = low
        self.high = high
        self.ignore = ignore
        self.fill = ignore if ignore is not None else fill
        self.found = None

    def contains(self, known):
        return known is not None and known[0] >= self.low and (self.high is None or known[1] < self.high)

    def known_to_pass(self):
        """True if a remembered range of this very tensor version already satisfies the rule
        (no device read); else notes the tensor's region for remember()."""
        if self.satisfied_by(_verified.known_ranges_of(self.tensor)):
            return True
        found = self.found = _verified.region(self.tensor)
        return found is not None and self.satisfied_by(_verified.known_ranges(found))

    def satisfied_by(self, facts):
        if facts is None:
            return False
        return self.contains(facts.get(None)) or (self.ignore is not None and self.contains(facts.get(self.ignore)))

    def confirmed(self):
        """The asynchronous verdict came back clean: the bounds themselves are the range."""
        high = float("inf") if self.high is None else self.high - 1
        _verified.remember(self.found, self.low, high, self.ignore)

    def passes(self):
        return self.known_to_pass() or self.evaluate()

    def evaluate(self):
        # One fused reduction and two reads: the whole cost of a clean call.
        tensor = distinct(self.tensor)
        low, high = torch.aminmax(tensor)
        low, high = _item(low), _item(high)
        _verified.remember(self.found, low, high)
        if low >= self.low and (self.high is None or high < self.high):
            return True
        if self.ignore is None:
            return False
        # Padding such as ignore_index=-100 sits below the range: look again without it.
        # (The ignored entries read as `low`: still bounds of the other values.)
        low, high = torch.aminmax(torch.where(tensor == self.ignore, self.low, tensor))
        low, high = _item(low), _item(high)
        _verified.remember(self.found, low, high, self.ignore)
        return low >= self.low and (self.high is None or high < self.high)

    def bad(self):
        t = self.tensor
        bad = t < self.low
        if self.high is not None:
            bad = bad | (t >= self.high)
        if self.ignore is not None:
            bad = bad & (t != self.ignore)
        return bad

    def repaired(self, bad):
        return self.tensor.masked_fill(bad, self.fill)


class UnitIntervalRule(Rule):
    """Every entry lies in [0, 1]; NaN fails, as it fails the kernel's comparison."""

    __slots__ = ()

    def passes(self):
        low, high = torch.aminmax(self.tensor.detach())
        return bool(_item(low) >= 0 and _item(high) <= 1)

    def bad(self):
        t = self.tensor.detach()
        return ~((t >= 0) & (t <= 1))

    def repaired(self, bad):
        return self.tensor.masked_fill(bad, 0.5)


class ProbabilityRowsRule(Rule):
    """multinomial: no NaN, inf or negative entry, and every row sums to more than 0."""

    __slots__ = ()

    def passes(self):
        p = self.tensor.detach()
        low, high = torch.aminmax(p)
        if not (_item(low) >= 0 and _item(high) < float("inf")):
            return False
        return bool(_item((p.sum(-1) > 0).all()))

    def bad(self):
        p = self.tensor.detach()
        broken = ((p < 0) | ~torch.isfinite(p)).any(-1)
        return broken | ~(p.sum(-1) > 0)

    def repaired(self, bad):
        # A bad row becomes uniform: sampling still works and the draw is never used.
        return self.tensor.masked_fill(bad.unsqueeze(-1), 1.0)


class MaskedScatterRule(Rule):
    """masked_scatter_: the mask selects at most source.numel() elements."""

    __slots__ = ("shape", "available")

    def __init__(self, arg, mask, shape, available):
        super().__init__(arg, mask)
        self.shape = shape
        self.available = available

    def selected(self):
        return self.tensor.expand(self.shape).sum()

    def passes(self):
        return _item(self.selected()) <= self.available

    def bad(self):
        return self.selected() > self.available

    def repaired(self, bad):
        flat = self.tensor.expand(self.shape).reshape(-1)
        keep = flat & (flat.cumsum(0) <= self.available)
        return torch.where(bad, keep.view(self.shape), self.tensor.expand(self.shape))


class OffsetsRule(Rule):
    """embedding_bag offsets: start at 0, never decrease, never pass the number of indices."""

    __slots__ = ("count",)

    def __init__(self, arg, offsets, count):
        super().__init__(arg, offsets)
        self.count = count

    def bad(self):
        o = self.tensor
        bad = (o < 0) | (o > self.count)
        if o.numel() > 1:
            decreasing = o[1:] < o[:-1]
            bad = bad | torch.cat([torch.zeros(1, dtype=torch.bool, device=o.device), decreasing])
        first = torch.zeros_like(bad)
        first[:1] = o[:1] != 0
        return bad | first

    def repaired(self, bad):
        o = self.tensor
        fixed = torch.cummax(o.clamp(0, self.count), 0).values
        fixed = torch.cat([torch.zeros(1, dtype=o.dtype, device=o.device), fixed[1:]])
        return torch.where(bad.any(), fixed, o)


class RepeatsRule(Rule):
    """repeat_interleave with output_size: repeats >= 0 and their total equals output_size."""

    __slots__ = ("count", "output_size")

    def __init__(self, arg, repeats, count, output_size):
        super().__init__(arg, repeats)
        self.count = count
        self.output_size = output_size

    def total(self):
        r = self.tensor.reshape(-1)
        return r.sum() * self.count if r.numel() == 1 and self.count != 1 else r.sum()

    def bad(self):
        return (self.tensor < 0).any() | (self.total() != self.output_size)

    def repaired(self, bad):
        r = self.tensor.reshape(-1).expand(self.count) if self.tensor.numel() == 1 else self.tensor
        fixed = torch.zeros_like(r)
        if fixed.numel():
            fixed[:1] = self.output_size
        return torch.where(bad, fixed, r)


class SumRule(Rule):
    """ctc_loss with concatenated targets: lengths >= 0 and they add up to `total`."""

    __slots__ = ("total",)

    def __init__(self, arg, lengths, total, host_list=False):
        super().__init__(arg, lengths, host_list)
        self.total = total

    def bad(self):
        return (self.tensor < 0).any() | (self.tensor.sum() != self.total)

    def repaired(self, bad):
        fixed = torch.zeros_like(self.tensor)
        fixed.view(-1)[:1] = self.total
        return torch.where(bad, fixed, self.tensor)


class UsedTargetsRule(Rule):
    """ctc_loss padded targets: the first target_lengths[i] entries of row i lie in [0, C).

    Padding is usually the blank (0), itself in [0, C): when the whole tensor lies in the
    range, the used entries do too, so the whole tensor is first checked as an index range
    (one fused reduction, remembered by _verified) and the per-row mask is built only when
    padding falls outside it.
    """

    __slots__ = ("lengths", "classes", "whole")

    def __init__(self, arg, targets, lengths, classes):
        super().__init__(arg, targets)
        self.lengths = lengths
        self.classes = classes
        self.whole = RangeRule(arg, targets, 0, classes)

    def known_to_pass(self):
        return self.whole.known_to_pass()

    def evaluate(self):
        return self.whole.evaluate() or self.passes()

    def used(self):
        t = self.tensor
        positions = torch.arange(t.shape[-1], device=t.device)
        return positions < self.lengths.to(t.device, non_blocking=True).unsqueeze(-1)

    def bad(self):
        t = self.tensor
        return self.used() & ((t < 0) | (t >= self.classes))

    def repaired(self, bad):
        return self.tensor.masked_fill(bad, min(1, self.classes - 1))
