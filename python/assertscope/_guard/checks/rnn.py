"""LSTM / GRU / RNN: an initial hidden state whose batch size is not the input's.

What: `nn.LSTM(x, (h0, c0))` with h0 built for a fixed batch size (`torch.zeros(1, BATCH,
H)`, or a state carried over from the previous batch) while the input batch is smaller,
usually the last batch of an epoch.
Why: PyTorch refuses it with "Expected hidden[0] size (1, 4, 24), got [1, 16, 24]", which
names neither the batch sizes nor the line that built the state.
Example: `h0 = torch.zeros(1, BATCH_SIZE, HIDDEN)` in forward; `hidden = model.init_hidden(64)`
before the loop of a DataLoader without drop_last.
Fix: build the state from the input (`x.size(0)` with batch_first, else `x.size(1)`), or
pass `drop_last=True` to the DataLoader.
Cost: PyTorch's own argument check is wrapped; the guard's code runs only when it raises.
"""

import sys

import torch.nn as nn

from ... import _frames, kb
from ...errors import Finding, build, report
from .._patching import Patches

_patches = Patches()


class _Op:
    op = "rnn"


def _mismatch(module, input, hidden, batch_sizes):
    """(hidden tensor, its batch size, the input's) when the only difference is the batch."""
    if batch_sizes is not None or input is None or input.dim() != 3:
        return None
    batch = input.shape[0 if module.batch_first else 1]
    states = hidden if isinstance(hidden, tuple) else (hidden,)
    for state in states:
        if getattr(state, "dim", lambda: 0)() == 3 and state.shape[1] != batch:
            return state, state.shape[1], batch
    return None


def _guarding(original):
    def check_forward_args(self, input, hidden, batch_sizes, *rest):
        try:
            return original(self, input, hidden, batch_sizes, *rest)
        except RuntimeError as exc:
            found = _mismatch(self, input, hidden, batch_sizes)
            if found is None:
                raise
            raise _error(self, input, found) from exc

    check_forward_args.__wrapped__ = original
    check_forward_args.__qualname__ = original.__qualname__
    return check_forward_args


def _error(module, input, found):
    from ..origin import attach, modules, runtime

    state, state_batch, batch = found
    kind = type(module).__name__
    where = "dimension 0 (batch_first=True)" if module.batch_first else "dimension 1"
    finding = Finding(
        "batch-size-mismatch",
        f"the initial hidden state has batch size {state_batch}, the input {batch} (batch is {where} of the input)",
        {"hidden_batch": state_batch, "input_batch": batch, "hidden_shape": list(state.shape), "input_shape": list(input.shape)},
        [("hidden", state), ("input", input)],
        kb.hint("rnn-hidden-batch", module=kind, hidden=state_batch, batch=batch),
    )
    location = _frames.location_dict(_frames.capture())
    error = build(kind.lower(), finding, location)
    start = sys._getframe(1)

    def gather(facts):
        runtime.frames(facts, location, start, state)
        facts.runtime["operand"] = {"parameter": "hx", "index": 1}
        facts.runtime["modules"] = [runtime.module_entry(modules.built(module), "rnn")]

    return report(attach.with_gathered(error, gather))


def install():
    if _patches:
        return
    for cls in (nn.RNNBase, nn.LSTM):
        original = vars(cls).get("check_forward_args")
        if original is not None:
            _patches.replace(cls, "check_forward_args", _guarding(original))


def uninstall():
    _patches.undo()
