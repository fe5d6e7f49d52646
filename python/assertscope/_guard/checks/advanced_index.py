"""Advanced indexing: `x[idx]`, `x[idx] = v`, `x.index_put_((idx,), v)` with integer tensors,
lists or arrays.

What: each integer index lies in [-size, size) of the dimension it indexes (negative
indices wrap once).
Why: CUDA asserts `-sizes[i] <= index && index < sizes[i] && "index out of bounds"`
(IndexKernel.cu) or, for first-dimension gathers, the vectorized gather's bound check.
Example: `cos_cached[position_ids]` with positions past the cache; a KV-cache slot index
past the cache; ids counted from 1.
Fix: build the table for the longest length, truncate, or fix the code making the indices.
Plain ints and slices are checked by PyTorch on the host and cost the guard nothing.
"""

import torch

from ... import kb
from ...errors import Finding
from .._analysis import interval, looks_like_positions, plural, range_report
from .._call import Call, Check
from .._runner import cpu_calls_left_to_pytorch, run, run_on_cpu
from .._state import skip_call
from .._rules import RangeRule
from .._verified import ranges_of
from ._common import is_index_tensor, within

_SIMPLE = frozenset({int, slice, type(None), type(Ellipsis), bool})
Tensor = torch.Tensor
_NO_KWARGS = {}  # (never written: run_on_cpu only unpacks it)


def needs_check(index):
    """False for indices made only of ints, slices, None, Ellipsis and bools (the fast path)."""
    kind = type(index)
    if kind in _SIMPLE:
        return False
    if kind is tuple:
        for item in index:
            if type(item) not in _SIMPLE:
                return True
        return False
    return True


def _is_sequence(value):
    return isinstance(value, (list, tuple)) or type(value).__name__ == "ndarray"


def treated_as_tuple(index):
    """PyTorch's (NumPy's old) rule: a short list holding tensors, sequences, slices, None or
    Ellipsis is read as a tuple of indices; other lists are one index tensor."""
    if not isinstance(index, list) or len(index) >= 32:
        return False
    return any(
        isinstance(item, (torch.Tensor, slice)) or _is_sequence(item) or item is None or item is Ellipsis
        for item in index
    )


def as_index(item):
    """An index item as a tensor where PyTorch would make one of it; other items unchanged."""
    if isinstance(item, list) or type(item).__name__ == "ndarray":
        try:
            return torch.as_tensor(item)
        except Exception:  # noqa: BLE001 - PyTorch will refuse it with its own message
            return None
    return item


class IndexRule(RangeRule):
    __slots__ = ("dim",)

    def __init__(self, position, tensor, dim, size):
        super().__init__(position, tensor, -size, size)
        self.dim = dim


class AdvancedIndexCheck(Check):
    pytorch_error = IndexError

    def __init__(self, op, container, names, tuple_only=False):
        self.op = op
        self.container = container
        self.names = names
        # index_put_ takes a sequence of tensors, one per dimension, never a single index.
        self.tuple_only = tuple_only

    def quick(self, call):
        index = call.get(self.container)
        if type(index) is tuple or (self.tuple_only and isinstance(index, list)):
            if len(index) != 1:
                return False  # (several indices take the full path)
            index = index[0]
        elif self.tuple_only:
            return False
        if not isinstance(index, torch.Tensor):
            return False
        facts = ranges_of(index)
        if facts is None:
            return False
        target = call.get("input")
        if not isinstance(target, torch.Tensor) or not target.dim():
            return False
        size = target.shape[0]
        return within(facts.get(None), -size, size)

    def items(self, index):
        if self.tuple_only or type(index) is tuple or treated_as_tuple(index):
            return [as_index(item) for item in index]
        return [as_index(index)]

    def rules(self, call):
        target, index = call.get("input"), call.get(self.container)
        if not isinstance(target, torch.Tensor) or target.is_meta:
            return []
        if isinstance(index, torch.Tensor) and not self.tuple_only:
            # x[idx], the common form (h[seeds], table[ids]): one index for dimension 0.
            # (A mask indexes as many dimensions as it has; a 0-dim integer index is read as
            # a Python int and checked by PyTorch on the host.)
            if not (is_index_tensor(index) and index.dim() and index.numel() and target.dim()):
                return []
            return [IndexRule(0, index, 0, target.shape[0])]
        items = self.items(index)
        consumed = 0
        for item in items:
            if isinstance(item, torch.Tensor):
                consumed += item.dim() if item.dtype in (torch.bool, torch.uint8) else 1
            elif item is None or item is Ellipsis or type(item) is bool:
                continue
            else:
                consumed += 1
        if consumed > target.dim():
            return []  # too many indices: PyTorch says so itself
        rules = []
        dim = 0
        for position, item in enumerate(items):
            if item is Ellipsis:
                dim += target.dim() - consumed
            elif item is None or type(item) is bool:
                continue
            elif isinstance(item, torch.Tensor):
                if item.dtype in (torch.bool, torch.uint8):
                    dim += item.dim()
                    continue
                # A 0-dim integer tensor in x[i] is read as a Python int and checked on the host.
                if is_index_tensor(item) and item.numel() and (item.dim() or self.tuple_only):
                    rules.append(IndexRule(position, item, dim, target.shape[dim]))
                dim += 1
            elif item is not None:
                dim += 1
        return rules

    def call_with(self, call, position, value):
        index = call.get(self.container)
        items = self.items(index)
        items[position] = value
        if self.tuple_only:
            whole = type(index)(items) if isinstance(index, (list, tuple)) else tuple(items)
        elif type(index) is tuple or treated_as_tuple(index):
            whole = tuple(items)
        else:
            whole = items[0]
        return call.replaced(self.container, whole)

    def explain(self, call, rule):
        target = call.get("input")
        size = target.shape[rule.dim]
        suffix, facts = range_report(rule.tensor, -size, size)
        facts["dim"] = rule.dim
        facts["size"] = size
        found = (
            f"{facts['bad_count']} of {facts['numel']} {plural(facts['numel'], 'index')} for dimension "
            f"{rule.dim} (size {size}) outside [-{size}, {size}): {suffix}"
        )
        if looks_like_positions(rule.tensor) and facts["max"] >= size:
            hint = kb.hint("positions-past-table", bound=size, length=rule.tensor.shape[-1])
        else:
            hint = kb.hint(
                "index-past-tensor",
                value=facts["max"] if facts["max"] >= size else facts["min"],
                range=interval(-size, size),
                what=f"dimension {rule.dim} of a tensor of shape {list(target.shape)}",
            )
        tensors = [("index", rule.tensor), ("input", target)]
        return Finding("index-out-of-bounds", found, facts, tensors, hint)

    def wrapper(self, original):
        """x[idx] and x[idx] = v are hot: ints and slices go straight to PyTorch."""
        check, names = self, self.names
        if self.container != "index":
            return None
        if len(names) == 2:

            def __getitem__(self, index):
                if type(index) is not Tensor and not needs_check(index):
                    return original(self, index)
                if self.is_cpu and cpu_calls_left_to_pytorch():
                    return run_on_cpu(check, original, names, (self, index), _NO_KWARGS)
                if skip_call():
                    return original(self, index)
                return run(check, original, Call(names, (self, index), {}))

            return __getitem__

        def __setitem__(self, index, value):
            if type(index) is not Tensor and not needs_check(index):
                return original(self, index, value)
            if self.is_cpu and cpu_calls_left_to_pytorch():
                return run_on_cpu(check, original, names, (self, index, value), _NO_KWARGS, True)
            if skip_call():
                return original(self, index, value)
            return run(check, original, Call(names, (self, index, value), {}), True)

        return __setitem__


_GET = AdvancedIndexCheck("index", "index", ("input", "index"))
_SET = AdvancedIndexCheck("index", "index", ("input", "index", "value"))
_PUT = AdvancedIndexCheck("index_put_", "indices", ("input", "indices", "values", "accumulate"), tuple_only=True)

PATCHES = [
    ("torch.Tensor", "__getitem__", _GET, _GET.names),
    ("torch.Tensor", "__setitem__", _SET, _SET.names),
    ("torch.Tensor", "index_put_", _PUT, _PUT.names),
    ("torch.Tensor", "index_put", _PUT, _PUT.names),
    ("torch", "index_put_", _PUT, _PUT.names),
    ("torch", "index_put", _PUT, _PUT.names),
]
