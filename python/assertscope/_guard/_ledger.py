"""The asynchronous mode: each rule is evaluated on the device, without a host sync, and a
failure is carried to a later, cheap check point.

The result of a guarded call's rules goes into a per-device record (the sequence number of
the first guarded call that failed), the argument is repaired so that the real kernel never
sees the bad value (and the CUDA context stays healthy), and the record is copied to pinned
host memory with a non-blocking copy followed by an event. Check points (_checkpoints) look
at finished copies without waiting. When a copy shows a failure, the GuardError of the call
that failed is raised there, naming that call's own line (captured cheaply when it was
made) and its values (read now, on the error path).

When the asynchronous error is raised, and what state the training is in then:
  * it is raised at the first check point after the device finished the failing call's
    check: usually the loss's `.item()` of the same step, the next guarded call, or the
    `backward()` / `optimizer.step()` that follows; at the latest when the process exits
    (then it is printed and reported, and the exit status is left alone);
  * no kernel ever saw the bad value: class targets were replaced by ignore_index, indices
    by 0 (or a valid offset), probabilities by 0.5 or a uniform row. Ops after the failing
    call may have run on those stand-ins (their results are meaningless, but the CUDA
    context is healthy and the process can still save a checkpoint or print more);
  * if the check point is `optimizer.step()` the step is refused (the hook raises before
    the update); a `.item()` or `.cpu()` check point raises after returning its value.
Only the first failure is reported; the record starts clean after it.
"""

import collections
import itertools
import threading

import torch

from .. import _frames
from ._failure import cpu_refusal, failure
from ._state import Busy, thread_state

__all__ = ["Ledger", "Pending", "Entry", "defer", "poll_all", "drain_all", "forget_ledgers", "ledgers", "NONE"]

NONE = 2**62  # "no failure" in a ledger record
SLOTS = 64  # pinned host slots per CUDA ledger (copies in flight at once)

_sequence = itertools.count(1)


class Pending:
    """A guarded call whose verdict is still on the device."""

    __slots__ = ("check", "call", "rules", "location", "original", "writes_input", "versions")

    def __init__(self, check, call, rules, location, original=None, writes_input=False):
        self.check = check
        self.call = call
        self.original = original  # the real op: on the CPU, asked for its own message
        self.writes_input = writes_input
        self.rules = rules
        self.location = location
        # Inference tensors keep no version counter (reading it raises): None, "unknown".
        self.versions = [None if rule.tensor.is_inference() else rule.tensor._version for rule in rules]

    def confirmed(self):
        """The device found every rule of this call satisfied: remember it (_verified)."""
        for rule in self.rules:
            rule.confirmed()

    def error(self):
        where = _frames.capture()
        with Busy():
            failing = next((rule for rule in self.rules if not rule.passes()), self.rules[0])
            changed = any(v is not None and r.tensor._version != v for r, v in zip(self.rules, self.versions))
            untracked = any(v is None for v in self.versions)
            note = "found by the asynchronous guard"
            if where is not None:
                note += f" at {where[0] and _frames.display_path(where[0])}:{where[1]}"
            note += (
                "; this call ran with the bad entries replaced by safe values, so nothing it "
                "computed should be used"
            )
            if changed:
                note += "; the tensor was modified in place since, the values shown are its current ones"
            elif untracked:
                note += (
                    "; the values shown are read now (an inference tensor keeps no version counter, "
                    "so a change in place since the call cannot be ruled out)"
                )
            refusal = None
            if self.original is not None:
                refusal = cpu_refusal(self.check, self.original, self.call, self.writes_input)
            return failure(self.check, self.call, failing, _frames.location_dict(self.location), note, refusal)


class Ledger:
    """The failure record of one device and the copies of it on their way to the host."""

    def __init__(self, device):
        self.device = device
        self.is_cuda = device.type == "cuda"
        self.lock = threading.RLock()
        # A normal tensor even when made under torch.inference_mode(): an inference tensor
        # could not be updated in place after the block ends.
        with torch.inference_mode(False):
            self.record = torch.full((), NONE, dtype=torch.int64, device=device)
            if self.is_cuda:
                self.host = torch.empty(SLOTS, dtype=torch.int64, pin_memory=True)
                self.slots = [self.host[i] for i in range(SLOTS)]
                self.free = list(range(SLOTS))
        self.pending = collections.OrderedDict()
        self.copies = collections.deque()  # (event or None, slot or value, covered sequence)

    def note(self, seq, flags, pending):
        with self.lock:
            failed = flags[0] if len(flags) == 1 else torch.stack(flags).any()
            torch.minimum(self.record, torch.where(failed, seq, NONE), out=self.record)
            self.pending[seq] = pending
            self.send(seq)

    def send(self, seq):
        """Starts a copy of the record that covers every call up to `seq`."""
        if not self.is_cuda:
            self.copies.append((None, _item(self.record), seq))
            return
        if not self.free:
            return  # copies in flight already; a later one covers this call (the record is cumulative)
        slot = self.free.pop()
        self.slots[slot].copy_(self.record, non_blocking=True)
        event = torch.cuda.Event()
        event.record()
        self.copies.append((event, slot, seq))

    def poll(self):
        """Looks at finished copies without waiting; raises the GuardError of a failed call."""
        with self.lock:
            seen = None
            while self.copies:
                event, slot, covered = self.copies[0]
                if event is not None and not event.query():
                    break
                self.copies.popleft()
                if event is not None:
                    value = _item(self.slots[slot])
                    self.free.append(slot)
                else:
                    value = slot
                seen = (value, covered)
                if value != NONE:
                    break
            if seen is None:
                return
            value, covered = seen
            if value == NONE:
                while self.pending and next(iter(self.pending)) <= covered:
                    self.pending.popitem(last=False)[1].confirmed()
                if self.pending and not self.copies:
                    self.send(next(reversed(self.pending)))
                return
            pending = self.pending.get(value)
            self.reset()
        if pending is not None:
            raise pending.error()

    def reset(self):
        with Busy():
            self.record.fill_(NONE)
        self.pending.clear()
        while self.copies:
            event, slot, _ = self.copies.popleft()
            if event is not None:
                self.free.append(slot)

    def drain(self):
        """At exit: waits for the device, then polls (a sync is fine once the program ends)."""
        if self.is_cuda:
            torch.cuda.synchronize(self.device)
        with self.lock:
            if self.pending and not self.copies:
                self.send(next(reversed(self.pending)))
        self.poll()


ledgers = {}
_ledgers_lock = threading.Lock()
_on_first_ledger = []  # callbacks run when the first ledger is made (the check points)


def _item(tensor):
    # The original Tensor.item: the patched one is a check point.
    return torch._C.TensorBase.item(tensor)


def on_first_ledger(callback):
    _on_first_ledger.append(callback)


def ledger_for(device):
    ledger = ledgers.get(device)
    if ledger is None:
        with _ledgers_lock:
            ledger = ledgers.get(device)
            if ledger is None:
                ledger = ledgers[device] = Ledger(device)
                for callback in _on_first_ledger:
                    callback()
    return ledger


class Entry:
    """A deferred verdict, recorded in its device's ledger once the real op accepted the call."""

    __slots__ = ("ledger", "seq", "flags", "pending")

    def __init__(self, ledger, seq, flags, pending):
        self.ledger = ledger
        self.seq = seq
        self.flags = flags
        self.pending = pending

    def record(self):
        self.ledger.note(self.seq, self.flags, self.pending)


def defer(check, call, rules, location=None, original=None, writes_input=False):
    """(the call with every bad entry of `rules` repaired, the Entry to record after it runs).

    location      the frame of the call when the caller already knows it (compiled code)
    original      the real op, which on the CPU is asked for its own message on the error path
    writes_input  the op writes into its first argument
    """
    location = _frames.capture() if location is None else location
    seq = next(_sequence)
    flags = []
    repaired = call
    for rule in rules:
        bad = rule.bad()
        flags.append(bad.any())
        if rule.tensor.is_inference() and not torch.is_inference_mode_enabled():
            # The stand-in must be an inference tensor too, or autograd's refusal to save
            # one for backward would no longer fire.
            with torch.inference_mode():
                value = rule.repaired_argument(bad)
        else:
            value = rule.repaired_argument(bad)
        repaired = check.call_with(repaired, rule.arg, value)
    ledger = ledger_for(rules[0].tensor.device)
    return repaired, Entry(ledger, seq, flags, Pending(check, call, rules, location, original, writes_input))


def poll_all():
    """A check point: raises a failure an earlier asynchronous check recorded, if it is known."""
    if ledgers and not getattr(thread_state, "busy", False):
        for ledger in tuple(ledgers.values()):
            # Without the lock: a copy started meanwhile by another thread is seen at the
            # next check point. With no copy in flight there is nothing to look at.
            if ledger.copies:
                ledger.poll()


def forget_ledgers():
    """Drops every ledger (after fork: a child cannot use its parent's CUDA state)."""
    ledgers.clear()


def drain_all():
    """Waits for every device and raises a recorded failure (unguard, exit)."""
    for ledger in list(ledgers.values()):
        ledger.drain()
