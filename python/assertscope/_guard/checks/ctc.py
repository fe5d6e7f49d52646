"""F.ctc_loss / nn.CTCLoss: lengths that fit and target ids inside the class dimension.

What: input_lengths in [0, T]; target_lengths >= 0 and, for padded targets [N, S], <= S,
for concatenated targets adding up to their number; the first target_lengths[i] ids of each
row in [0, C).
Why: the length checks are PyTorch's own (raised before the kernel); an id outside [0, C)
makes the CUDA kernel read outside log_probs (illegal memory access or a garbage loss).
Example: input_lengths in raw frames after a model that subsamples time by 4.
Fix: compute input_lengths after subsampling; keep target ids in 1..C-1 with blank=0.
"""

import torch

from ... import kb
from ...errors import Finding
from .._analysis import plural, range_report
from .._call import Check
from .._state import checkable
from .._rules import RangeRule, SumRule, UsedTargetsRule
from .._verified import ranges_of
from ._common import is_index_tensor, within


def _known_within(value, high):
    """True if the remembered range of a tensor argument lies in [0, high)."""
    facts = ranges_of(value)
    return facts is not None and within(facts.get(None), 0, high)


def _lengths(value):
    """(tensor, was a Python list) for a lengths argument, or (None, False)."""
    if isinstance(value, torch.Tensor):
        return (value, False) if is_index_tensor(value) else (None, False)
    if isinstance(value, int) and not isinstance(value, bool):
        return torch.tensor(value), True
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
        return torch.tensor(value, dtype=torch.long), True
    return None, False


class CtcCheck(Check):
    op = "ctc_loss"
    cause = "ctc-loss"
    checked_by_cpu_kernel = None  # target ids outside [0, C) are read unchecked on the CPU

    def quick(self, call):
        """Padded targets whose tensors' remembered ranges all fit: lengths within their
        bounds and every id of the targets, padding included, in [0, C)."""
        if len(call.args) >= 4:  # as F.ctc_loss calls it: no name lookups on every step
            log_probs, targets, input_lengths, target_lengths = call.args[:4]
        else:
            log_probs, targets = call.get("log_probs"), call.get("targets")
            input_lengths, target_lengths = call.get("input_lengths"), call.get("target_lengths")
        if not (isinstance(targets, torch.Tensor) and checkable(log_probs)):
            return False
        dims = log_probs.dim()
        if not (dims == 2 or (dims == 3 and targets.dim() == 2)):
            return False  # concatenated targets: their lengths' sum is read every call
        shape = log_probs.shape
        return (
            _known_within(targets, shape[-1])
            and _known_within(input_lengths, shape[0] + 1)
            and _known_within(target_lengths, targets.shape[-1] + 1)
        )

    def rules(self, call):
        log_probs, targets = call.get("log_probs"), call.get("targets")
        if not (checkable(log_probs) and is_index_tensor(targets)) or log_probs.dim() not in (2, 3):
            return []
        steps, classes = log_probs.shape[0], log_probs.shape[-1]
        input_lengths, input_listed = _lengths(call.get("input_lengths"))
        target_lengths, target_listed = _lengths(call.get("target_lengths"))
        if input_lengths is None or target_lengths is None:
            return []
        rules = []
        if input_lengths.numel():
            rules.append(RangeRule("input_lengths", input_lengths, 0, steps + 1, host_list=input_listed))
        padded = log_probs.dim() == 2 or targets.dim() == 2
        if padded and targets.numel():
            columns = targets.shape[-1]
            rules.append(RangeRule("target_lengths", target_lengths, 0, columns + 1, host_list=target_listed))
            rules.append(UsedTargetsRule("targets", targets, target_lengths, classes))
        elif not padded:
            rules.append(SumRule("target_lengths", target_lengths, targets.numel(), host_list=target_listed))
            if targets.numel():
                rules.append(RangeRule("targets", targets, 0, classes))
        return rules

    def explain(self, call, rule):
        log_probs, targets = call.get("log_probs"), call.get("targets")
        steps, classes = log_probs.shape[0], log_probs.shape[-1]
        tensors = [("log_probs", log_probs), ("targets", targets), (rule.arg, rule.tensor)]
        if rule.arg == "input_lengths":
            suffix, facts = range_report(rule.tensor, 0, steps + 1)
            found = f"input_lengths outside [0, {steps}] (T = {steps} time steps in log_probs): {suffix}"
            hint = kb.hint("ctc-input-lengths", length=facts["max"], steps=steps)
            return Finding(self.cause, found, facts, tensors[:1] + tensors[2:], hint)
        if rule.arg == "target_lengths" and isinstance(rule, SumRule):
            total = int(rule.tensor.sum())
            facts = {"sum": total, "bound": rule.total, "min": int(rule.tensor.min())}
            found = f"target_lengths add up to {total}, but the concatenated targets hold {rule.total} ids"
            hint = kb.hint("ctc-target-lengths-sum")
            return Finding(self.cause, found, facts, tensors[1:], hint)
        if rule.arg == "target_lengths":
            columns = targets.shape[-1]
            suffix, facts = range_report(rule.tensor, 0, columns + 1)
            found = f"target_lengths outside [0, {columns}] (targets have {columns} columns): {suffix}"
            hint = kb.hint("ctc-target-length-past-padding")
            return Finding(self.cause, found, facts, tensors[1:], hint)
        bad = rule.bad()
        if isinstance(rule, UsedTargetsRule):
            from .._analysis import locate, positions_text

            count, values, positions = locate(rule.tensor, bad)
            suffix = positions_text(values, positions, count)
            facts = {"bad_count": count, "bound": classes, "positions": positions, "bad_values": values}
        else:
            suffix, facts = range_report(rule.tensor, 0, classes)
            count = facts["bad_count"]
        found = f"{count} target {plural(count, 'id')} outside [0, {classes}) (C = {classes} classes in log_probs): {suffix}"
        blank = call.get("blank", 0)
        hint = kb.hint("ctc-target-ids", last=classes - 1, blank=blank if isinstance(blank, int) else 0)
        return Finding(self.cause, found, facts, tensors[:2], hint)


PATCHES = [
    ("torch", "ctc_loss", CtcCheck(), ("log_probs", "targets", "input_lengths", "target_lengths", "blank", "reduction", "zero_infinity")),
]
