"""Class targets of cross_entropy, nll_loss, multi_margin_loss and multilabel_margin_loss.

What: every class-index target is in [0, C), C being the size of the class dimension of the
input, unless it equals ignore_index (cross_entropy and nll_loss only). multilabel_margin_loss
takes [-1, C): -1 ends the list of labels of a row.
Why: the loss kernels index the logits with the label; CUDA asserts `t >= 0 && t < n_classes`
(Loss.cu, NLLLoss2d.cu) and poisons the context. Targets of shape [N, 1] or one-hot integer
targets are refused on the host; the guard says why in the same words.
Example: labels 1..10 with a 10-class head; a segmentation mask with void pixels of 255.
Fix: remap labels to 0..C-1, size the head from the data, pass ignore_index for void labels.
"""

import torch

from ... import kb
from ...errors import Finding
from .._analysis import interval, looks_one_based, plural, range_report
from .._call import Check
from .._state import checkable
from .._rules import RangeRule, Rule
from .._verified import ranges_of
from ._common import is_index_tensor, within

LARGE_VOCABULARY = 1000  # more classes than this: the "classes" are probably tokens


def class_hint(facts, classes, ignore_index, op, has_ignore_index=True):
    """The specific fix for out-of-range class labels, from the shape of the bad values."""
    bad = facts["distinct_bad_values"]
    high = facts["max"]
    if looks_one_based(facts, classes):
        return kb.hint("one-based-labels", max=high, last=high - 1, needed=high + 1)
    if bad == [255]:
        return kb.hint("void-label-255")
    if bad and all(v < 0 for v in bad):
        values = ", ".join(map(str, bad))
        if not has_ignore_index:
            return kb.hint("padding-without-ignore-index", op=op, values=values)
        if all(v == -1 for v in bad):
            return kb.hint("padding-label", value=-1)
        return kb.hint("negative-labels", values=values, ignore_index=ignore_index)
    if high is not None and high >= classes:
        if classes >= LARGE_VOCABULARY:
            return kb.hint("lm-head-too-small", max=high, bound=classes)
        return kb.hint("head-too-small", max=high, bound=classes, needed=high + 1, last=classes - 1)
    return None


class ClassTargetCheck(Check):
    cause = "target-out-of-range"

    def __init__(self, op, has_ignore_index=True, low=0, class_dim_of_batched=1, pytorch_error=RuntimeError):
        self.op = op
        self.pytorch_error = pytorch_error
        self.has_ignore_index = has_ignore_index
        self.low = low
        self.class_dim_of_batched = class_dim_of_batched
        self.checks_shapes = op in ("cross_entropy", "nll_loss")  # batch_problem, shape_problem

    def classes(self, input):
        return input.shape[self.class_dim_of_batched] if input.dim() >= 2 else input.shape[0]

    def ignore_index(self, call):
        return call.get("ignore_index", -100) if self.has_ignore_index else None

    def quick(self, call):
        target = call.get("target")
        facts = ranges_of(target)
        if facts is None:
            return False
        input = call.get("input")
        if not isinstance(input, torch.Tensor):
            return False
        shape = input.shape
        dims = len(shape)
        if not dims or self.shapes_refused(shape, target.shape):
            return False  # the full path explains PyTorch's refusal
        classes = shape[self.class_dim_of_batched] if dims >= 2 else shape[0]
        ignore = self.ignore_index(call)
        return within(facts.get(None), self.low, classes) or (
            ignore is not None and within(facts.get(ignore), self.low, classes)
        )

    def rules(self, call):
        input, target = call.get("input"), call.get("target")
        if not (checkable(input) and is_index_tensor_or_byte(target)) or target.numel() == 0 or input.dim() == 0:
            problem = self.float_target_problem(input, target)
            return [ShapeRule("target", target, problem)] if problem is not None else []
        if self.shapes_refused(input.shape, target.shape):
            mismatch = self.batch_problem(input, target)
            if mismatch is not None:
                return [ShapeRule("target", target, mismatch)]
            shape = self.shape_problem(input, target)
            if shape is not None:
                return [ShapeRule("target", target, shape)]
        return [RangeRule("target", target, self.low, self.classes(input), ignore=self.ignore_index(call))]

    def float_target_problem(self, input, target):
        """A floating target where class indices are expected: PyTorch refuses it on the host
        ("expected target dtype to be Long"); cross_entropy reads a float target of the
        logits' own shape as probabilities, which is fine."""
        if self.op not in ("cross_entropy", "nll_loss") or not (checkable(input) and checkable(target)):
            return None
        if not target.is_floating_point() or target.numel() == 0 or input.dim() < 2:
            return None
        if self.op == "cross_entropy" and tuple(target.shape) == tuple(input.shape):
            return None
        return ("target-dtype", f"a {str(target.dtype).replace('torch.', '')} target: class-index targets must be int64", None)

    def shapes_refused(self, shape, target_shape):
        """True where batch_problem() or shape_problem() finds a problem, from the two shapes
        alone: the test every clean call pays, the explanations only the refused ones."""
        dims = len(shape)
        if not self.checks_shapes or dims < 2:
            return False
        target_dims = len(target_shape)
        return (target_dims == dims - 1 and shape[0] != target_shape[0]) or (dims == 2 and target_dims == 2)

    def batch_problem(self, input, target):
        """Logits and targets with different batch sizes (PyTorch: "Expected input batch_size
        (32) to match target batch_size (50)"): a reshape or a flatten changed one of them."""
        if self.op not in ("cross_entropy", "nll_loss") or input.dim() < 2 or target.dim() != input.dim() - 1:
            return None
        if input.shape[0] == target.shape[0]:
            return None
        return (
            "batch-size-mismatch",
            f"the input has batch size {input.shape[0]} ({list(input.shape)}), the target {target.shape[0]} "
            f"({list(target.shape)})",
            None,
        )

    def shape_problem(self, input, target):
        """The host-side shape errors torch raises for class losses, explained (or None)."""
        if self.op not in ("cross_entropy", "nll_loss") or input.dim() != 2 or target.dim() != 2:
            return None
        if self.op == "cross_entropy" and tuple(target.shape) == tuple(input.shape):
            return (
                "target-shape",
                f"an integer target of the same shape as the logits {list(input.shape)} is read as "
                "class probabilities: this looks like a one-hot target",
                kb.hint("target-one-hot"),
            )
        return (
            "target-shape",
            f"a target of shape {list(target.shape)} for logits {list(input.shape)}: class-index targets "
            "must have shape [N]",
            kb.hint("target-n-by-1"),
        )

    def explain(self, call, rule):
        input, target = call.get("input"), call.get("target")
        tensors = [("target", target), ("input", input)]
        if isinstance(rule, ShapeRule):
            cause, found, hint = rule.problem
            values = {"target_shape": list(target.shape), "input_shape": list(input.shape)}
            if cause == "target-dtype":
                hint = self.float_target_hint(target, values)
            return Finding(cause, found, values, tensors, hint)
        classes = self.classes(input)
        ignore = rule.ignore
        suffix, facts = range_report(target, self.low, classes, ignore)
        facts["classes"] = classes
        where = f"C = {classes}" + (f", ignore_index = {ignore}" if ignore is not None else "")
        found = (
            f"{facts['bad_count']} of {facts['numel']} {plural(facts['numel'], 'target')} outside "
            f"{interval(self.low, classes)} ({where}): {suffix}"
        )
        hint = class_hint(facts, classes, ignore, self.op, self.has_ignore_index)
        # The logits matter here only by their class count, which `found` states: the
        # target, which holds the refused values, is the one tensor summarised.
        return Finding(self.cause, found, facts, tensors[:1], hint)


    @staticmethod
    def float_target_hint(target, values):
        """Error path: floats that hold whole numbers are labels made with the wrong dtype."""
        t = target.detach()
        finite = t[torch.isfinite(t)]
        values["target_dtype"] = str(t.dtype).replace("torch.", "")
        if finite.numel() == 0 or not bool((finite == finite.round()).all()):
            return None
        low, high = int(finite.min().item()), int(finite.max().item())
        values["min"], values["max"] = low, high
        return kb.hint("float-class-targets", dtype=values["target_dtype"], min=low, max=high)


def is_index_tensor_or_byte(value):
    """nll_loss also takes uint8 class targets."""
    return is_index_tensor(value) or (checkable(value) and value.dtype == torch.uint8)


class ShapeRule(Rule):
    """A host-side problem known from shapes alone: it always fails, without reading values."""

    __slots__ = ("problem",)
    host = True

    def __init__(self, arg, tensor, problem):
        super().__init__(arg, tensor)
        self.problem = problem

    def passes(self):
        return False

    def bad(self):
        return torch.ones((), dtype=torch.bool, device=self.tensor.device)

    def repaired(self, bad):
        return self.tensor


_CROSS_ENTROPY = ClassTargetCheck("cross_entropy", pytorch_error=IndexError)
_NLL = ClassTargetCheck("nll_loss", pytorch_error=IndexError)
_MULTI_MARGIN = ClassTargetCheck("multi_margin_loss", has_ignore_index=False, class_dim_of_batched=-1)
_MULTILABEL = ClassTargetCheck("multilabel_margin_loss", has_ignore_index=False, low=-1, class_dim_of_batched=-1)

PATCHES = [
    ("torch._C._nn", "cross_entropy_loss", _CROSS_ENTROPY, ("input", "target", "weight", "reduction", "ignore_index", "label_smoothing")),
    ("torch._C._nn", "nll_loss_nd", _NLL, ("input", "target", "weight", "reduction", "ignore_index")),
    ("torch._C._nn", "nll_loss", _NLL, ("input", "target", "weight", "reduction", "ignore_index")),
    ("torch._C._nn", "nll_loss2d", _NLL, ("input", "target", "weight", "reduction", "ignore_index")),
    ("torch._C._nn", "multi_margin_loss", _MULTI_MARGIN, ("input", "target", "p", "margin", "weight", "reduction")),
    ("torch._C._nn", "multilabel_margin_loss", _MULTILABEL, ("input", "target", "reduction")),
]
