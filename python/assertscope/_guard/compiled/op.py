"""The custom op `assertscope::checked` that a guarded graph calls in front of each guarded op:
the op's call rebuilt from the site string the graph carries, checked as the eager guard checks
it, the checked (in the asynchronous mode: repaired) index tensors returned."""

import functools
import json

import torch

from .. import _ledger
from .._call import Call
from .._failure import failure
from .._state import Busy, mode_for, state
from .targets import guarded_targets

OP_NAME = "assertscope::checked"


def define_op():
    library = torch.library.Library("assertscope", "FRAGMENT")
    library.define("checked(Tensor[] values, Tensor?[] tensors, str site) -> Tensor[]")
    library.impl("checked", _checked, "CompositeExplicitAutograd")
    torch.library.register_fake(OP_NAME, _checked_fake, lib=library)
    return library


def _checked_fake(values, tensors, site):
    return [torch.empty_like(value) for value in values]


def _checked(values, tensors, site):
    """The compiled code's check: the guarded op's call rebuilt from `site`, checked like an
    eager call; returns the (in the asynchronous mode: repaired) checked arguments."""
    entry = _site(site)
    check, call = entry.call(values, tensors)
    if not state.enabled:
        return [value.clone() for value in values]
    _ledger.poll_all()
    error = None
    with Busy():
        deferred = []
        for rule in check.rules(call):
            if not rule.host and mode_for(rule.tensor) == "async":
                deferred.append(rule)
            elif not rule.passes():
                error = failure(check, call, rule, entry.location)
                break
        if error is None and deferred:
            if not (deferred[0].tensor.is_cuda and torch.cuda.is_current_stream_capturing()):
                # The graph runs the op right after this returns: nothing can refuse it
                # first, so the record is made now.
                call, record = _ledger.defer(check, call, deferred, entry.frame)
                record.record()
    if error is not None:
        raise error
    results = []
    for path, value in zip(entry.returned, values):
        result = _at(call, path)
        # (a custom op may not return its input: an unrepaired argument goes out as a copy)
        results.append(result if isinstance(result, torch.Tensor) and result is not value else value.clone())
    return results


def _at(call, path):
    """The argument at `path`: [name], or [name, position] inside an index tuple."""
    value = call.get(path[0])
    return value[path[1]] if len(path) > 1 else value


class _Site:
    """One guarded op of a compiled graph, decoded from the string the graph carries."""

    def __init__(self, spec):
        data = json.loads(spec)
        self.key = data["op"]
        self.args = data["args"]
        self.kwargs = data["kwargs"]
        self.returned = data["returned"]
        where = data.get("where")
        self.location = self.frame = None
        if where:
            file, line, function, code = where
            from ..._frames import display_path

            self.frame = (file, line, function)
            self.location = {"file": display_path(file), "line": line, "function": function, "code": code}

    def call(self, values, tensors):
        check, names = guarded_targets()["keys"][self.key]
        args = tuple(_decode(a, values, tensors) for a in self.args)
        kwargs = {k: _decode(v, values, tensors) for k, v in self.kwargs.items()}
        return check, Call(names, args, kwargs)


@functools.lru_cache(maxsize=4096)
def _site(spec):
    return _Site(spec)


def _decode(encoded, values, tensors):
    if isinstance(encoded, dict):
        if "value" in encoded:
            return values[encoded["value"]]
        if "tensor" in encoded:
            return tensors[encoded["tensor"]]
        if "tuple" in encoded:
            return tuple(_decode(e, values, tensors) for e in encoded["tuple"])
        if "slice" in encoded:
            return slice(*encoded["slice"])
        return Ellipsis
    if isinstance(encoded, list):
        return [_decode(e, values, tensors) for e in encoded]
    return encoded
