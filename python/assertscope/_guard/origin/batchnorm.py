"""BatchNorm in training mode given one value per channel: usually the last batch of an
epoch holding a single sample.

What: `F.batch_norm` (every BatchNorm module in training mode) refuses an input with one
value per channel; PyTorch says "Expected more than 1 value per channel when training".
Why: the message names neither the DataLoader that made a batch of one nor the layer.
Example: 129 samples in batches of 32 without drop_last: the fifth batch has 1 sample.
Fix: `DataLoader(..., drop_last=True)`, or a batch size that divides the dataset; for
inference call `model.eval()`.
Cost: PyTorch's own size check is wrapped; the guard's code runs only when it raises.
"""

import sys

import torch.nn.functional as F

from ... import _frames
from ...errors import Finding, build

_undo = []


def _guarding(original):
    def _verify_batch_size(size):
        try:
            return original(size)
        except ValueError as exc:
            raise _error(list(size)) from exc

    _verify_batch_size.__wrapped__ = original
    return _verify_batch_size


def _batchnorm_in_stack():
    """The BatchNorm module whose forward is running (the `self` of a frame), or None."""
    import torch.nn as nn

    frame = sys._getframe(2)
    while frame is not None:
        candidate = frame.f_locals.get("self")
        if isinstance(candidate, nn.modules.batchnorm._NormBase):
            return candidate
        frame = frame.f_back
    return None


def _error(size):
    from . import Origins, loader, report

    finding = Finding(
        "batchnorm-single-sample",
        f"an input of shape {size} has one value per channel; BatchNorm in training mode needs at least 2",
        {"input_shape": size},
        [],
        None,
    )
    error = build("batch_norm", finding, _frames.location_dict(_frames.capture()))
    origins = Origins()
    try:
        recent = loader.recent()
        found = loader.loader_site(recent[0]) if recent else None
        if found is not None:
            data_loader, (filename, line, function) = found
            samples = len(data_loader.dataset)
            size_ = data_loader.batch_size
            note = f"DataLoader(batch_size={size_}, drop_last={data_loader.drop_last}) created here"
            if size_ and samples % size_ == 1:
                note += f": {samples} samples leave a last batch of 1; pass drop_last=True"
            origins.add(filename, line, function, "data", note)
        origins.add_module(_batchnorm_in_stack())
    except Exception:  # noqa: BLE001 - the origin is extra
        pass
    return report(error, origins)


def install():
    if _undo or not hasattr(F, "_verify_batch_size"):
        return
    original = F._verify_batch_size
    F._verify_batch_size = _guarding(original)
    _undo.append(original)


def uninstall():
    while _undo:
        original = _undo.pop()
        if getattr(F._verify_batch_size, "__wrapped__", None) is original:
            F._verify_batch_size = original
