"""The guard: in-process checks that catch values which would make a CUDA kernel assert,
before the kernel runs.

    import assertscope
    assertscope.guard()                    # on for the rest of the process
    with assertscope.guard(mode="sync"):   # on inside the block, previous state after it
        train()

Modes: "auto" (default) checks CUDA tensors asynchronously (no host sync: a failure is
raised at the next check point, see _engine) and CPU tensors synchronously; "sync" checks
every tensor synchronously (on CUDA: one host sync per guarded call, the exact line at
once); "async" checks every tensor asynchronously, CPU tensors included.
"""

from .._contract import GUARD_MODES as MODES  # noqa: E402

__all__ = ["guard", "unguard", "is_guarded", "MODES"]


class GuardHandle:
    """What guard() returns: the guard is already on; `with` turns it back off after."""

    def __init__(self, previous):
        self._previous = previous

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        from . import _engine

        was_enabled, mode = self._previous
        try:
            if exc_type is None:
                _engine.drain_all()  # a failure still on the device belongs to this block
        finally:
            if was_enabled:
                _engine.state.mode = mode
            else:
                # While another exception propagates, a late guard failure must not replace it.
                _switch_off(drain=exc_type is None)
        return False

    def __repr__(self):
        from . import _engine

        return f"<assertscope guard mode={_engine.state.mode!r}>"


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
    from . import _engine, _patch

    previous = (_engine.state.enabled, _engine.state.mode)
    _patch.install()
    from . import compiled  # compiled: torch.compile'd graphs get the checks too

    compiled.install()  # compiled
    _engine.state.enabled = True
    _engine.state.mode = mode
    return GuardHandle(previous)


def _switch_off(drain=True):
    from . import _engine, _patch, compiled  # compiled

    _engine.state.enabled = False
    _patch.uninstall()
    compiled.uninstall()  # compiled
    _engine.shutdown(drain)


def unguard():
    """Turns the guard off; raises a failure the asynchronous mode had not reported yet."""
    import sys

    if "torch" not in sys.modules:
        return
    from . import _engine

    if not _engine.state.enabled:
        return
    try:
        _engine.drain_all()
    finally:
        _switch_off()


def is_guarded():
    import sys

    if "assertscope._guard._engine" not in sys.modules:
        return False
    from . import _engine

    return _engine.state.enabled
