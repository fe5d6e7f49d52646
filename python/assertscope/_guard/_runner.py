"""Running one guarded call: its rules, synchronously or asynchronously by device and mode,
then the real op.

Synchronous: each rule is evaluated to a Python bool before the real op runs (on CUDA that
is one host sync per guarded call). A bad value raises GuardError right there, unless
PyTorch refuses the call on the host for a reason of its own (a shape, a dtype, a None
where a tensor belongs): then PyTorch's error goes first, exactly as it would unguarded.
Asynchronous (default for CUDA tensors): see _ledger. Its verdict is recorded only once
the real op accepted the call, so an error PyTorch raises itself leaves nothing pending.
"""

import torch

from .. import _frames
from . import _checkpoints  # noqa: F401 - installs itself with the first ledger
from . import _hooks  # noqa: F401 - a guarded call may leave a failure for the exit hook
from ._call import Call
from ._failure import cpu_refusal, failure, writing_into_copies
from ._ledger import defer, ledgers, poll_all
from ._state import skip_call, state, thread_state

__all__ = ["run", "run_on_cpu", "explain_cpu_refusal", "cpu_calls_left_to_pytorch"]


def run(check, original, call, writes_input=False, asked_quick=False):
    """Runs `original` on `call` after the check's rules, in the mode for their device.

    writes_input: the op writes into its first argument (x.scatter_, x[i] = v): an index
    that shares memory with it is checked synchronously, since a repaired copy would hide
    PyTorch's own overlap check.
    asked_quick: the caller asked check.quick(call) with no ledger to poll and it said False.
    """
    if ledgers:
        poll_all()
    if not asked_quick and check.quick(call):
        return original(*call.args, **call.kwargs) if call.kwargs else original(*call.args)
    entry = None
    was_busy = getattr(thread_state, "busy", False)
    thread_state.busy = True  # (not a `with Busy()`: this is the hot path of every call)
    try:
        deferred = None
        for rule in check.rules(call):
            if rule.known_to_pass():
                continue  # this tensor, unchanged, was read before (_verified): no device work
            mode = state.mode
            if mode == "auto":
                mode = "async" if rule.tensor.is_cuda else "sync"
            if mode == "async" and not rule.host and not _aliases_output(rule.tensor, call, writes_input):
                deferred = [rule] if deferred is None else deferred + [rule]
            elif not rule.evaluate():
                return _refuse(check, original, call, rule, writes_input)
        if deferred is not None and not (deferred[0].tensor.is_cuda and torch.cuda.is_current_stream_capturing()):
            # (while a CUDA graph is captured nothing may be read back later: no check)
            call, entry = defer(check, call, deferred, original=original, writes_input=writes_input)
    finally:
        thread_state.busy = was_busy
    result = original(*call.args, **call.kwargs) if call.kwargs else original(*call.args)
    if entry is not None:
        entry.record()
    return result


def cpu_calls_left_to_pytorch():
    """True in the default mode with no asynchronous verdict pending (which `run` polls
    first): a CPU call whose kernel checks its values then goes to run_on_cpu."""
    return not ledgers and state.mode == "auto"


def run_on_cpu(check, original, names, args, kwargs, writes_input=False):
    """Runs a call whose CPU kernel checks every value the check's rules check (see
    Check.checked_by_cpu_kernel) exactly as unguarded; the rules run only if it raises,
    to turn PyTorch's refusal into a GuardError of the same type, with its message first.
    (The wrappers of _install inline this, one Python frame less on every call.)"""
    try:
        return original(*args, **kwargs) if kwargs else original(*args)
    except Exception as error:
        explain_cpu_refusal(check, original, names, args, kwargs, writes_input, error)
        raise  # no rule of the check fails: PyTorch refused the call for another reason


def explain_cpu_refusal(check, original, names, args, kwargs, writes_input, refusal):
    """Raises the GuardError for a CPU call PyTorch refused, if a rule of the check fails on
    it; returns if none does, or where checks must not run, for the caller to raise `refusal`."""
    if not skip_call():
        _explain_refusal(check, original, Call(names, args, kwargs), writes_input, refusal)


def _explain_refusal(check, original, call, writes_input, refusal):
    """Raises the GuardError for a call PyTorch's CPU kernel refused (`refusal`) if a rule
    of the check fails on it; returns if none does (the refusal is about something else)."""
    was_busy = getattr(thread_state, "busy", False)
    thread_state.busy = True
    try:
        for rule in check.rules(call):
            if not rule.known_to_pass() and not rule.evaluate():
                _refuse(check, original, call, rule, writes_input, refusal)
    finally:
        thread_state.busy = was_busy


def _aliases_output(tensor, call, writes_input):
    """True if `tensor` shares memory with a tensor the call writes to."""
    outputs = []
    if writes_input and call.args:
        outputs.append(call.args[0])
    out = call.kwargs.get("out")
    if out is not None:
        outputs.extend(out if isinstance(out, (list, tuple)) else (out,))
    if not outputs:
        return False
    storage = tensor.untyped_storage().data_ptr()
    return any(
        isinstance(o, torch.Tensor) and (o is tensor or o.untyped_storage().data_ptr() == storage)
        for o in outputs
    )


def _refuse(check, original, call, rule, writes_input, refusal=None):
    """Raises for a failed rule: PyTorch's own error where it refuses the call itself before
    any kernel could read the bad value (a shape, a dtype, a None, overlapping memory), else
    the GuardError. A host rule (a target shape) explains an error PyTorch raises itself.
    refusal: the error PyTorch already raised for this very call (its CPU kernel ran)."""
    location = _frames.location_dict(_frames.capture())
    if rule.host:
        # PyTorch refuses these shapes before any kernel runs: its error, then ours.
        refused, result = _outcome(original, call, refusal)
        if not refused:
            return result  # this PyTorch accepts it: nothing to report
        raise failure(check, call, rule, location, pytorch_error=result) from None
    if not rule.tensor.is_cuda and _aliases_output(rule.tensor, call, writes_input):
        # An index sharing memory with the output: PyTorch checks the overlap first, and
        # on the CPU its kernel checks the values, so PyTorch's own call is safe and exact.
        refused, result = _outcome(original, call, refusal)
    else:
        # PyTorch on the call with the bad entries replaced, which no kernel can trip on,
        # writing into copies: if it still refuses, that refusal (a shape, a dtype) is what
        # it would have said first.
        repaired = check.call_with(call, rule.arg, rule.repaired_argument(rule.bad()))
        try:
            repaired = writing_into_copies(repaired, writes_input)
        except torch.OutOfMemoryError:
            raise failure(check, call, rule, location) from None
        refused, result = _outcome(original, repaired)
    if refused:
        # (the refusal of the call itself where there is one: the repaired copy's is the same)
        _raise_with_note(refusal if refusal is not None else result, check, call, rule)
    # A bad value PyTorch's CPU kernel would refuse: its message first, then the guard's.
    if refusal is None:
        refusal = cpu_refusal(check, original, call, writes_input)
    raise failure(check, call, rule, location, pytorch_error=refusal) from None


def _raise_with_note(error, check, call, rule):
    """Raises PyTorch's own error; the guard's finding follows it (Python 3.11+ shows notes)."""
    if hasattr(error, "add_note"):
        error.add_note(f"assertscope: {check.op} has a bad value as well: {check.explain(call, rule).found}")
    raise error


def _outcome(original, call, refusal=None):
    """(True, the exception) if PyTorch raises for the call, else (False, its result);
    `refusal`: what PyTorch already raised for this very call (it is not run again)."""
    if refusal is not None:
        return True, refusal
    try:
        return False, original(*call.args, **call.kwargs)
    except Exception as error:  # noqa: BLE001 - any refusal of PyTorch's is the answer
        return True, error
