"""Running one guarded call: its rules, synchronously or asynchronously by device and mode,
then the real op.

Synchronous: each rule is evaluated to a Python bool before the real op runs (on CUDA that
is one host sync per guarded call). A bad value raises GuardError right there.
Asynchronous (default for CUDA tensors): see _ledger.
"""

import torch

from .. import _frames
from . import _hooks  # noqa: F401 - a guarded call may leave a failure for the exit hook
from ._failure import failure
from ._ledger import defer, poll_all
from ._state import Busy, mode_for
from . import _checkpoints  # noqa: F401 - installs itself with the first ledger

__all__ = ["run"]


def run(check, original, call):
    """Runs `original` on `call` after the check's rules, in the mode for their device."""
    poll_all()
    error = None
    with Busy():
        rules = check.rules(call)
        deferred = []
        for rule in rules:
            if not rule.host and mode_for(rule.tensor) == "async":
                deferred.append(rule)
            elif not rule.passes():
                error = failure(check, call, rule, _frames.location_dict(_frames.capture()))
                break
        if error is None and deferred:
            if not (deferred[0].tensor.is_cuda and torch.cuda.is_current_stream_capturing()):
                call = defer(check, call, deferred)
            # (while a CUDA graph is captured nothing may be read back later: no check)
    if error is not None:
        raise error
    return original(*call.args, **call.kwargs)
