"""The guard: in-process checks that catch values which would make a CUDA kernel assert,
before the kernel runs.

    import assertscope
    assertscope.guard()                    # on for the rest of the process
    with assertscope.guard(mode="sync"):   # on inside the block, previous state after it
        train()

Modes: "auto" (default) checks CUDA tensors asynchronously (no host sync: a failure is
raised at the next check point, see _ledger); on the CPU, where PyTorch's kernels refuse
the same bad values themselves (all but ctc_loss's target ids and embedding_bag's offsets
in "max" mode), the call runs exactly as unguarded and the rules only run to explain a
refusal (Check.checked_by_cpu_kernel), other CPU calls are checked synchronously; "sync"
checks every tensor synchronously before the op (on CUDA: one host sync per guarded call,
the exact line at once); "async" checks every tensor asynchronously, CPU tensors included.

The modules, each importing only those above it:
  _state        mode, and when a call must not be checked
  _call         a call's arguments; the Check interface (checks/ implement it)
  _patching     replacing attributes (shared by the CPU remapping)
  _verified     ranges of index tensors already read, trusted while the tensor is unchanged
  _rules        the conditions a kernel asserts, evaluated on the host or the device
  _failure      a failed rule -> GuardError
  _ledger       the asynchronous mode: device-side records, repaired arguments
  _checkpoints  sync points that poll the ledgers
  _hooks        exit and fork
  _runner       one guarded call: rules, then the real op
  _install      putting the checks' wrappers in place, and taking them away
"""

from .._contract import GUARD_MODES as MODES

__all__ = ["guard", "unguard", "is_guarded", "MODES"]


class GuardHandle:
    """What guard() returns: the guard is already on; `with` turns it back off after."""

    def __init__(self, previous):
        self._previous = previous

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        from . import _ledger, _state

        was_enabled, mode = self._previous
        try:
            if exc_type is None:
                _ledger.drain_all()  # a failure still on the device belongs to this block
        finally:
            if was_enabled:
                _state.state.mode = mode
            else:
                # While another exception propagates, a late guard failure must not replace it.
                _switch_off(drain=exc_type is None)
        return False

    def __repr__(self):
        from ._state import state

        return f"<assertscope guard mode={state.mode!r}>"


def guard(mode="auto"):
    """Turns the guard on (now) and returns a handle usable as a context manager."""
    if mode is None:
        mode = "auto"
    if mode not in MODES:
        raise ValueError(f"assertscope.guard: mode must be one of {', '.join(MODES)}, not {mode!r}")
    try:
        import torch  # noqa: F401
    except ImportError as exc:
        raise ImportError("assertscope.guard() needs PyTorch, which is not installed for this Python") from exc
    from . import _install
    from ._state import state

    previous = (state.enabled, state.mode)
    _install.install()
    from . import compiled  # compiled: torch.compile'd graphs get the checks too

    compiled.install()  # compiled
    state.enabled = True
    state.mode = mode
    return GuardHandle(previous)


def _switch_off(drain=True):
    from . import _hooks, _install, compiled  # compiled
    from ._state import state

    state.enabled = False
    try:
        _hooks.shutdown(drain)  # first: the check points wrap some of _install's replacements
    finally:
        _install.uninstall()
        compiled.uninstall()  # compiled


def unguard():
    """Turns the guard off; raises a failure the asynchronous mode had not reported yet."""
    import sys

    if "torch" not in sys.modules:
        return
    from . import _ledger
    from ._state import state

    if not state.enabled:
        return
    try:
        _ledger.drain_all()
    finally:
        _switch_off()


def is_guarded():
    import sys

    state_module = sys.modules.get("assertscope._guard._state")
    return state_module is not None and state_module.state.enabled
