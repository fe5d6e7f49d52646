"""The rewrite of a Dynamo graph: in front of each guarded op, one call of the custom op
`assertscope::checked` (see op.py), which the guarded op then reads its checked arguments from."""

import json
import operator

import torch

from .targets import INDEXING, bind, match

# The argument the inserted op returns (and the guarded op then reads), in order of preference.
_CHECKED_ARGUMENTS = ("indices", "index", "target", "targets", "tensor")
# Further index arguments the check's rules read, returned as well: in the asynchronous mode
# each one the kernel reads must reach it repaired.
_ALSO_CHECKED = ("offsets",)


class _Unsupported(Exception):
    """A graph value the inserted op cannot carry (a symbolic size, an unknown object)."""


def _example(node):
    value = node.meta.get("example_value", node.meta.get("val"))
    return value


def _encode(value, tensors):
    import torch.fx

    if isinstance(value, torch.fx.Node):
        example = _example(value)
        if not isinstance(example, torch.Tensor):
            raise _Unsupported
        tensors.append(value)
        return {"tensor": len(tensors) - 1}
    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, list):
        return [_encode(v, tensors) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [_encode(v, tensors) for v in value]}
    if isinstance(value, slice):
        return {"slice": [_encode(part, tensors) for part in (value.start, value.stop, value.step)]}
    if value is Ellipsis:
        return {"ellipsis": True}
    raise _Unsupported  # (a symbolic int of a dynamic shape among them)


def _user_frame(stack_trace):
    """(file, line, function, code) of the deepest user frame of a node's recorded stack."""
    if not stack_trace:
        return None
    from ..._frames import is_user_file

    lines = stack_trace.splitlines()
    found = None
    for i, line in enumerate(lines):
        text = line.strip()
        if not text.startswith('File "'):
            continue
        try:
            file = text[len('File "') : text.index('", line ')]
            rest = text[text.index('", line ') + len('", line ') :]
            number, _, function = rest.partition(", in ")
            number = int(number)
        except ValueError:
            continue
        if is_user_file(file):
            # After a graph break Dynamo names the rest of a function torch_dynamo_resume_in_<name>_at_<line>.
            if function.startswith("torch_dynamo_resume_in_"):
                function = function[len("torch_dynamo_resume_in_") :].rpartition("_at_")[0] or function
            code = lines[i + 1].strip() if i + 1 < len(lines) and not lines[i + 1].strip().startswith("File ") else None
            found = (file, number, function.strip(), code or None)
    return found


def _is_tensor_node(value):
    return isinstance(_example_of(value), torch.Tensor)


def _returned(bound, indexing):
    """[(path, node)] of the arguments the inserted op returns checked: [name] or, inside the
    index tuple of `x[rows, cols]`, [name, position]."""
    if indexing:
        if not _is_tensor_node(bound["input"][1]):
            return []  # getitem of a tuple, a list, a torch.Size
        index = bound["index"][1]
        if _is_integer_tensor_node(index):
            return [(["index"], index)]
        if isinstance(index, (tuple, list)):
            return [(["index", i], item) for i, item in enumerate(index) if _is_integer_tensor_node(item)]
        return []
    first = next((name for name in _CHECKED_ARGUMENTS if name in bound and _is_tensor_node(bound[name][1])), None)
    if first is None:
        return []
    also = [name for name in _ALSO_CHECKED if name in bound and _is_integer_tensor_node(bound[name][1])]
    return [([name], bound[name][1]) for name in [first, *also]]


def _is_integer_tensor_node(value):
    example = _example_of(value)
    return isinstance(example, torch.Tensor) and not example.dtype.is_floating_point and example.dtype not in (
        torch.bool,
        torch.complex64,
        torch.complex128,
    )


def _replace_input(node, bound, path, checked):
    """Points the guarded op's argument at `path` to the checked value."""
    kind, position = bound[path[0]][0]
    current = node.args[position] if kind == "arg" else node.kwargs[position]
    if len(path) > 1:
        items = list(current)
        items[path[1]] = checked
        current = type(current)(items)
    else:
        current = checked
    if kind == "arg":
        node.args = node.args[:position] + (current,) + node.args[position + 1 :]
    else:
        node.kwargs = {**node.kwargs, position: current}


def rewrite(gm):
    """Inserts the check in front of every guarded op of a Dynamo graph; returns how many."""
    graph = gm.graph
    inserted = 0
    for node in list(graph.nodes):
        matched = match(node)
        if matched is None:
            continue
        key, check, names, renames = matched
        bound = bind(node, names, renames)
        if not bound:
            continue
        returned = _returned(bound, node.target in INDEXING)
        if not returned:
            continue
        slots = {id(value): i for i, (_, value) in enumerate(returned)}
        tensors = []
        try:
            kwargs = {name: _encode(bound[name][1], tensors) for name in names if name in bound}
        except _Unsupported:
            continue
        # The returned values travel as `values`: a slot of `tensors` that holds one is renamed.
        values = [value for _, value in returned]
        kwargs = {name: _as_value_slots(value, tensors, slots) for name, value in kwargs.items()}
        spec = json.dumps(
            {
                "op": key,
                "args": [],
                "kwargs": kwargs,
                "returned": [path for path, _ in returned],
                "where": _user_frame(node.meta.get("stack_trace")),
            },
            separators=(",", ":"),
        )
        tensors = [t if id(t) not in slots else None for t in tensors]
        with graph.inserting_before(node):
            checked = graph.call_function(torch.ops.assertscope.checked.default, (values, tensors, spec))
            outputs = [graph.call_function(operator.getitem, (checked, i)) for i in range(len(values))]
        meta = {k: v for k, v in node.meta.items() if k in ("stack_trace", "nn_module_stack", "source_fn_stack")}
        checked.meta.update(meta)
        checked.meta["example_value"] = [_example(value) for value in values]
        for output, value, (path, _) in zip(outputs, values, returned):
            output.meta.update(meta)
            output.meta["example_value"] = _example(value)
            _replace_input(node, bound, path, output)
        inserted += 1
    if inserted:
        graph.lint()
        gm.recompile()
    return inserted


def _as_value_slots(encoded, tensors, slots):
    """`encoded` with each {"tensor": i} whose node is returned turned into {"value": j}."""
    if isinstance(encoded, dict):
        if "tensor" in encoded:
            slot = slots.get(id(tensors[encoded["tensor"]]))
            return encoded if slot is None else {"value": slot}
        return {k: _as_value_slots(v, tensors, slots) for k, v in encoded.items()}
    if isinstance(encoded, list):
        return [_as_value_slots(e, tensors, slots) for e in encoded]
    return encoded


def _example_of(value):
    import torch.fx

    return _example(value) if isinstance(value, torch.fx.Node) else None


def guarded_ops_in(gm):
    """How many assertscope checks a graph module contains (for tests and diagnostics)."""
    # By name: the op is defined only once a graph was guarded in this process.
    return sum(1 for n in gm.graph.nodes if n.op == "call_function" and str(n.target) == "assertscope.checked.default")
