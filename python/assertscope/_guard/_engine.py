"""Running checks: the synchronous mode, the asynchronous (no host sync) mode, and the
ledger that carries an asynchronous failure to a later, cheap check point.

Synchronous: each rule is evaluated to a Python bool before the real op runs (on CUDA that
is one host sync per guarded call). A bad value raises GuardError right there.

Asynchronous (default for CUDA tensors): each rule is evaluated on the device. The result
goes into a per-device record (the sequence number of the first guarded call that failed),
the argument is repaired so that the real kernel never sees the bad value (and the CUDA
context stays healthy), and the record is copied to pinned host memory with a non-blocking
copy followed by an event. Later check points look at finished copies without waiting:
every guarded call, `.item()`, `.tolist()`, `.cpu()`, `.numpy()`, `backward()`,
`optimizer.step()`, `torch.cuda.synchronize()`, and interpreter exit. When a copy shows a
failure, the GuardError of the call that failed is raised there, naming that call's own
line (captured cheaply when it was made) and its values (read now, on the error path).

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

import atexit
import collections
import itertools
import os
import sys
import threading

import torch

from .. import _frames, _report
from ..errors import GuardError

NONE = 2**62  # "no failure" in a ledger record
SLOTS = 64  # pinned host slots per CUDA ledger (copies in flight at once)

_tls = threading.local()
_sequence = itertools.count(1)


class State:
    """What guard() switched on."""

    enabled = False
    mode = "auto"  # "auto": async on CUDA, sync elsewhere; "sync"; "async" (any device)


state = State()


# --- when not to check ----------------------------------------------------------------------

_plain_types = {}
_is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", lambda: False)
_tracing_state = torch._C._get_tracing_state
_dispatch_depth = getattr(torch._C, "_len_torch_dispatch_stack", lambda: 0)
_functorch = getattr(getattr(torch._C, "_functorch", None), "is_functorch_wrapped_tensor", None)


def busy():
    return getattr(_tls, "busy", False)


def skip_call():
    """True where checks must not run: inside assertscope itself, while torch.compile or
    torch.jit.trace records a graph, or under a dispatch mode (FakeTensor, meta tracing)."""
    return (
        _is_compiling()  # first: torch.compile folds it to True and never traces the rest
        or getattr(_tls, "busy", False)
        or _tracing_state() is not None
        or _dispatch_depth() > 0
    )


def checkable(value):
    """A plain, strided tensor on a CPU or CUDA device whose values can be read."""
    cls = type(value)
    plain = _plain_types.get(cls)
    if plain is None:
        plain = issubclass(cls, torch.Tensor) and (
            cls is torch.Tensor
            or getattr(cls, "__torch_function__", None) is torch._C._disabled_torch_function_impl
        )
        _plain_types[cls] = plain
    if not plain:
        return False
    if value.layout is not torch.strided or value.device.type not in ("cpu", "cuda"):
        return False
    return not (_functorch is not None and _functorch(value))


class Busy:
    """Marks code that runs torch ops for the guard itself: wrappers let those through."""

    __slots__ = ("previous",)

    def __enter__(self):
        self.previous = getattr(_tls, "busy", False)
        _tls.busy = True

    def __exit__(self, *exc):
        _tls.busy = self.previous


# --- calls and arguments ----------------------------------------------------------------------


class Call:
    """The arguments of one call, addressable by parameter name."""

    __slots__ = ("names", "args", "kwargs")

    def __init__(self, names, args, kwargs):
        self.names = names
        self.args = args
        self.kwargs = kwargs

    def has(self, name):
        i = self.names.index(name)
        return i < len(self.args) or name in self.kwargs

    def get(self, name, default=None):
        i = self.names.index(name)
        if i < len(self.args):
            return self.args[i]
        return self.kwargs.get(name, default)

    def replaced(self, name, value):
        i = self.names.index(name)
        if i < len(self.args):
            args = list(self.args)
            args[i] = value
            return Call(self.names, tuple(args), self.kwargs)
        kwargs = dict(self.kwargs)
        kwargs[name] = value
        return Call(self.names, self.args, kwargs)


class Check:
    """One guarded op. Subclasses say which rules its kernel asserts and explain failures.

    op       the op's name in messages and diagnoses
    rules    (call) -> [Rule], from shapes and dtypes only (no device reads)
    explain  (call, rule) -> Finding, on the error path
    """

    op = "?"

    def rules(self, call):
        raise NotImplementedError

    def explain(self, call, rule):
        raise NotImplementedError

    def call_with(self, call, name, value):
        """Hook for checks whose repaired argument lives inside another (index tuples)."""
        return call.replaced(name, value)


def _mode_for(tensor):
    mode = state.mode
    if mode == "auto":
        return "async" if tensor.is_cuda else "sync"
    return mode


def run(check, original, call):
    """Runs `original` on `call` after the check's rules, in the mode for their device."""
    poll_all()
    error = None
    with Busy():
        rules = check.rules(call)
        deferred = []
        for rule in rules:
            if not rule.host and _mode_for(rule.tensor) == "async":
                deferred.append(rule)
            elif not rule.passes():
                error = failure(check, call, rule, _frames.location_dict(_frames.capture()))
                break
        if error is None and deferred:
            if not (deferred[0].tensor.is_cuda and torch.cuda.is_current_stream_capturing()):
                call = _defer(check, call, deferred)
            # (while a CUDA graph is captured nothing may be read back later: no check)
    if error is not None:
        raise error
    return original(*call.args, **call.kwargs)


def failure(check, call, rule, location, note=None):
    """The GuardError for a failed rule (its report written when `run` asked for one)."""
    from ..errors import build

    finding = check.explain(call, rule)
    error = build(check.op, finding, location, note)
    from . import origin  # where the bad value or size came from (error path only)

    origin.attach(error, origin.find(check, call, rule, finding, location))
    _report.write(error.diagnosis)
    return error


# --- the asynchronous mode ---------------------------------------------------------------------


class Pending:
    """A guarded call whose verdict is still on the device."""

    __slots__ = ("check", "call", "rules", "location", "versions")

    def __init__(self, check, call, rules, location):
        self.check = check
        self.call = call
        self.rules = rules
        self.location = location
        self.versions = [rule.tensor._version for rule in rules]

    def error(self):
        where = _frames.capture()
        with Busy():
            failing = next((rule for rule in self.rules if not rule.passes()), self.rules[0])
            changed = any(r.tensor._version != v for r, v in zip(self.rules, self.versions))
            note = "found by the asynchronous guard"
            if where is not None:
                note += f" at {where[0] and _frames.display_path(where[0])}:{where[1]}"
            note += (
                "; this call ran with the bad entries replaced by safe values, so nothing it "
                "computed should be used"
            )
            if changed:
                note += "; the tensor was modified in place since, the values shown are its current ones"
            return failure(self.check, self.call, failing, _frames.location_dict(self.location), note)


class Ledger:
    """The failure record of one device and the copies of it on their way to the host."""

    def __init__(self, device):
        self.device = device
        self.is_cuda = device.type == "cuda"
        self.lock = threading.RLock()
        self.record = torch.full((), NONE, dtype=torch.int64, device=device)
        self.pending = collections.OrderedDict()
        self.copies = collections.deque()  # (event or None, slot or value, covered sequence)
        if self.is_cuda:
            self.host = torch.empty(SLOTS, dtype=torch.int64, pin_memory=True)
            self.slots = [self.host[i] for i in range(SLOTS)]
            self.free = list(range(SLOTS))

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
                    self.pending.popitem(last=False)
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


_ledgers = {}
_ledgers_lock = threading.Lock()


def _item(tensor):
    return torch._C.TensorBase.item(tensor)


def _ledger(device):
    ledger = _ledgers.get(device)
    if ledger is None:
        with _ledgers_lock:
            ledger = _ledgers.get(device)
            if ledger is None:
                ledger = _ledgers[device] = Ledger(device)
                _check_points.install()
    return ledger


def _defer(check, call, rules):
    location = _frames.capture()
    seq = next(_sequence)
    flags = []
    repaired = call
    for rule in rules:
        bad = rule.bad()
        flags.append(bad.any())
        repaired = check.call_with(repaired, rule.arg, rule.repaired_argument(bad))
    _ledger(rules[0].tensor.device).note(seq, flags, Pending(check, call, rules, location))
    return repaired


def poll_all():
    """A check point: raises a failure an earlier asynchronous check recorded, if it is known."""
    if _ledgers and not getattr(_tls, "busy", False):
        for ledger in list(_ledgers.values()):
            ledger.poll()


def forget_ledgers():
    """Drops every ledger (after fork: a child cannot use its parent's CUDA state)."""
    _ledgers.clear()


def drain_all():
    """Waits for every device and raises a recorded failure (unguard, exit)."""
    for ledger in list(_ledgers.values()):
        ledger.drain()


def _at_exit():
    try:
        drain_all()
    except GuardError as error:
        sys.stderr.write(f"assertscope.GuardError (found at exit): {error}\n")
    except Exception:  # noqa: BLE001 - never turn a clean exit into a crash
        pass


atexit.register(_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=forget_ledgers)


class _CheckPoints:
    """Natural sync points that poll the ledgers, installed with the first ledger."""

    def __init__(self):
        self.installed = []
        self.hook = None

    def install(self):
        if self.installed:
            return
        from . import _patch

        for name in ("item", "tolist", "cpu", "numpy"):
            self.installed.append(_patch.replace(torch.Tensor, name, _polling_after(name)))
        self.installed.append(_patch.replace(torch.autograd, "backward", _polling_before(torch.autograd.backward)))
        if torch.cuda.is_available():
            self.installed.append(_patch.replace(torch.cuda, "synchronize", _polling_after_fn(torch.cuda.synchronize)))
        try:
            from torch.optim.optimizer import register_optimizer_step_pre_hook

            self.hook = register_optimizer_step_pre_hook(lambda *args: poll_all())
        except ImportError:
            self.hook = None

    def uninstall(self):
        for undo in reversed(self.installed):
            undo()
        self.installed = []
        if self.hook is not None:
            self.hook.remove()
            self.hook = None


_check_points = _CheckPoints()


def _polling_after(name):
    original = getattr(torch.Tensor, name)

    def method(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        poll_all()
        return result

    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    method.__doc__ = original.__doc__
    return method


def _polling_after_fn(original):
    def function(*args, **kwargs):
        result = original(*args, **kwargs)
        poll_all()
        return result

    function.__name__ = original.__name__
    function.__doc__ = original.__doc__
    return function


def _polling_before(original):
    def function(*args, **kwargs):
        poll_all()
        return original(*args, **kwargs)

    function.__name__ = original.__name__
    function.__doc__ = original.__doc__
    return function


def shutdown(drain=True):
    """Removes the check points and drops the ledgers (after draining them, if asked)."""
    try:
        if drain:
            drain_all()
    finally:
        forget_ledgers()
        _check_points.uninstall()
