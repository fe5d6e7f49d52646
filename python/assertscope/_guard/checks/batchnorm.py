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
from ...errors import Finding, build, report
from .._patching import Patches

_patches = Patches()


def _guarding(original):
    def _verify_batch_size(size):
        try:
            return original(size)
        except ValueError as exc:
            raise _error(list(size)) from exc

    _verify_batch_size.__wrapped__ = original
    return _verify_batch_size


def _error(size):
    from ..origin import attach, loader, runtime

    finding = Finding(
        "batchnorm-single-sample",
        f"an input of shape {size} has one value per channel; BatchNorm in training mode needs at least 2",
        {"input_shape": size},
        [],
        None,
    )
    location = _frames.location_dict(_frames.capture())
    error = build("batch_norm", finding, location)
    start = sys._getframe(1)

    def gather(facts):
        runtime.frames(facts, location, start, None)
        norm = runtime.module_in_stack(("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"), start)
        if norm is not None:
            facts.runtime["modules"] = [runtime.module_entry(norm, "batchnorm", "num_features")]
        recent = loader.recent()
        if recent:
            _last_batch(facts, recent[0])

    return report(attach.with_gathered(error, gather))


def _last_batch(facts, record):
    """The batch of one: its step, and the DataLoader that made it (where it was built, its
    size and drop_last), as facts and, when its numbers explain the batch of one, a hint."""
    from ..origin import loader, runtime

    block = {"indices": list(record.indices), "batch_step": record.step}
    if record.steps:
        block["batches_in_epoch"] = record.steps
    found = loader.loader_site(record)
    if found is not None:
        data_loader, where = found
        block["loader"] = runtime.site(where)
        if data_loader is None:
            facts.runtime["dataset"] = block
            return
        samples, size = len(data_loader.dataset), data_loader.batch_size
        if size and samples % size == 1 and not data_loader.drop_last:
            facts.hints.append(
                f"the DataLoader built at {_frames.display_path(where[0])}:{where[1]} (batch_size={size}, drop_last=False) "
                f"leaves a last batch of 1 of its {samples} samples: pass drop_last=True"
            )
    facts.runtime["dataset"] = block


def install():
    if _patches or not hasattr(F, "_verify_batch_size"):
        return
    _patches.replace(F, "_verify_batch_size", _guarding(F._verify_batch_size))


def uninstall():
    _patches.undo()
