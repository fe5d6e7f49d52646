"""The guard's ties to the life of the process: a failure still on the device is reported
at exit, a forked child drops its parent's ledgers, switching off cleans up, and a
GuardError reaching the top of a thread or process marks its report (_outcome)."""

import atexit
import os
import sys

from . import _checkpoints, _ledger
from .. import _outcome
from ..errors import GuardError

__all__ = ["shutdown"]


def shutdown(drain=True):
    """Removes the check points and drops the ledgers (after draining them, if asked)."""
    try:
        if drain:
            _ledger.drain_all()
    finally:
        _ledger.forget_ledgers()
        _checkpoints.uninstall()


def _at_exit():
    try:
        _ledger.drain_all()
    except GuardError as error:
        # The bad value was only read back as the process ended: it would have failed it.
        _outcome.mark_uncaught(error)
        sys.stderr.write(f"assertscope.GuardError (found at exit): {error}\n")
    except Exception:  # noqa: BLE001 - never turn a clean exit into a crash
        pass


atexit.register(_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_ledger.forget_ledgers)
_outcome.install_with_the_guard()
