"""Check points of the asynchronous mode: natural sync points of a training loop that look
at the ledgers and raise a failure the device has recorded.

They are `.item()`, `.tolist()`, `.cpu()`, `.numpy()`, `backward()`, `optimizer.step()`
(refused before the update) and `torch.cuda.synchronize()`, besides every guarded call and
the exit of the interpreter. Installed with the first ledger, removed with the guard.
"""

import torch

from . import _ledger
from ._patching import Patches, wraps

__all__ = ["install", "uninstall"]

_patches = Patches()
_optimizer_hook = []


def install():
    if _patches:
        return
    for name in ("item", "tolist", "cpu", "numpy"):
        _patches.replace(torch.Tensor, name, _polling_after(getattr(torch.Tensor, name)))
    _patches.replace(torch.autograd, "backward", _polling_before(torch.autograd.backward))
    if torch.cuda.is_available():
        _patches.replace(torch.cuda, "synchronize", _polling_after(torch.cuda.synchronize))
    try:
        from torch.optim.optimizer import register_optimizer_step_pre_hook
    except ImportError:
        return
    _optimizer_hook.append(register_optimizer_step_pre_hook(lambda *args: _ledger.poll_all()))


def uninstall():
    _patches.undo()
    while _optimizer_hook:
        _optimizer_hook.pop().remove()


def _polling_after(original):
    poll_all = _ledger.poll_all

    def polling_after(*args, **kwargs):
        result = original(*args, **kwargs)
        poll_all()
        return result

    return wraps(polling_after, original)


def _polling_before(original):
    poll_all = _ledger.poll_all

    def polling_before(*args, **kwargs):
        poll_all()
        return original(*args, **kwargs)

    return wraps(polling_before, original)


_ledger.on_first_ledger(install)
