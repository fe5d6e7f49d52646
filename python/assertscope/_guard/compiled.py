"""The guard inside code compiled by torch.compile.

What it does: while the guard is on, every graph that Dynamo (torch.compile's tracer) hands to
a backend is rewritten before the backend sees it. In front of each guarded op in the graph
(F.embedding, F.embedding_bag, F.cross_entropy / nll_loss, gather, scatter, index_select,
one_hot, take, `x[idx]`, `x[idx] = v`, ... the ops of the checks' tables) one node is
inserted: the custom op `assertscope::checked`, which receives the op's tensors and its
constant arguments, runs the very same check the eager guard runs, and returns the checked
index (or target) tensors (every index tensor of `x[rows, cols]`, the ids and the offsets of
embedding_bag), which the guarded op then consumes. A bad value raises the usual GuardError,
naming the op, the user's line inside the compiled model (from the graph's record of where
each op was traced) and the values.

Why this way, and not one of the alternatives:
  * the check compiles into the graph: Dynamo's tracing is untouched, so the guard adds no
    graph break and no recompilation (torch._dynamo.explain counts are the same with and
    without it); the backend (Inductor, aot_eager, any other) sees one more op, opaque to it,
    with a fake kernel for shape propagation, and calls it from the generated code;
  * it runs on the real tensors, at the point in the compiled code where the op runs, so
    values computed inside the compiled region (ids = x.argmax(-1), shifted labels) are
    checked, which a check at the boundary of the compiled region could not do;
  * on CUDA tensors the check is the asynchronous one (no host sync): the bad entries are
    replaced by safe values in the returned tensor, so the generated kernel never asserts,
    and the failure is raised at the next check point, as in eager mode;
  * `torch._check`-style asserts on tensor values would need `.item()`: a graph break or a
    host sync per op.
The cost: one copy of each checked index/target tensor (a custom op may not return its
input), and the check's own reduction.

Ops that PyTorch itself never puts in a graph run between two graphs, in plain Python, where
the eager guard checks them as in uncompiled code (see _never_traced): ctc_loss (the shape of
its aten kernel's outputs depends on the lengths' values, so Dynamo breaks the graph there,
also with `capture_dynamic_output_shape_ops`), and one_hot without num_classes (its output
shape is the maximum value).

What it does not cover (the eager guard does, outside compiled regions):
  * ops whose non-tensor arguments are symbolic (dynamic shapes: `one_hot(t, n)` with a
    traced n, `x[idx, :n]` with a traced n), and ops on tensor subclasses;
  * graphs compiled before the guard was switched on (torch.compile caches them), and
    TorchScript: torch.jit.script / torch.jit.trace run their graphs in C++ without Python,
    so nothing in them is guarded; PyTorch's own CPU checks still raise there (IndexError /
    RuntimeError "index out of range in self"), and `assertscope explain` reads those;
"""

import functools
import inspect
import json
import operator
import sys
import threading

import torch

from . import _ledger
from ._call import Call
from ._failure import failure
from ._state import Busy, mode_for, state

__all__ = ["install", "uninstall", "rewrite", "guarded_ops_in"]

OP_NAME = "assertscope::checked"

# Dynamo keeps these functional forms in its graphs as they are (it does not trace into them):
# each maps to the builtin whose check applies, and renames the parameters that differ.
_FUNCTIONAL = {
    "embedding": (("torch", "embedding"), {"input": "indices"}),
    "cross_entropy": (("torch._C._nn", "cross_entropy_loss"), {}),
    "nll_loss": (("torch._C._nn", "nll_loss_nd"), {}),
    "binary_cross_entropy": (("torch._C._nn", "binary_cross_entropy"), {}),
    "multi_margin_loss": (("torch._C._nn", "multi_margin_loss"), {}),
    "multilabel_margin_loss": (("torch._C._nn", "multilabel_margin_loss"), {}),
    # F.embedding_bag passes mode as a string and padding_idx as None where the builtin takes
    # ints; the check reads neither, only the ids, the offsets and the table.
    "embedding_bag": (("torch", "embedding_bag"), {"input": "indices"}),
}
# The argument the inserted op returns (and the guarded op then reads), in order of preference.
_CHECKED_ARGUMENTS = ("indices", "index", "target", "targets", "tensor")
# Further index arguments the check's rules read, returned as well: in the asynchronous mode
# each one the kernel reads must reach it repaired.
_ALSO_CHECKED = ("offsets",)
# Tensor indexing: Dynamo records `x[idx]` and `x[idx] = v` as these, with the check's parameters.
_INDEXING = {operator.getitem: "torch.Tensor.__getitem__", operator.setitem: "torch.Tensor.__setitem__"}

_lock = threading.Lock()
_installed = []


# --- the custom op ----------------------------------------------------------------------------


def _define_op():
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
            from .._frames import display_path

            self.frame = (file, line, function)
            self.location = {"file": display_path(file), "line": line, "function": function, "code": code}

    def call(self, values, tensors):
        check, names = _targets()["keys"][self.key]
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


# --- which graph nodes are guarded ops ----------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _targets():
    """{"functions": {callable: (key, check, names, renames or None)}, "methods": {name: ...},
    "keys": {key: (check, names)}} for every guarded op a graph can contain."""
    from ._patching import resolve
    from .checks import PATCHES

    functions, methods, keys = {}, {}, {}
    by_owner = {}
    for owner_path, name, check, names in PATCHES:
        key = f"{owner_path}.{name}"
        if getattr(check, "wrapper", None) is not None:
            # Tensor indexing: in graphs as operator.getitem / setitem (see _INDEXING).
            if owner_path == "torch.Tensor" and key in _INDEXING.values():
                keys[key] = (check, names)
            continue
        try:
            owner = resolve(owner_path)
        except (ImportError, AttributeError):
            continue
        current = vars(owner).get(name) if isinstance(owner, type) else getattr(owner, name, None)
        if current is None:
            continue
        original = getattr(current, "__wrapped__", current)
        keys[key] = (check, names)
        by_owner[(owner_path, name)] = key
        if owner_path == "torch.Tensor":
            methods[name] = (key, check, names, None)
        else:
            # Dynamo records the builtin, or the guard's wrapper itself when torch._dynamo was
            # first imported while the guard was on (it then lists the wrapper as a torch function).
            functions[original] = functions[current] = (key, check, names, None)
    functional = torch.nn.functional
    for name, (owner_and_name, renames) in _FUNCTIONAL.items():
        key = by_owner.get(owner_and_name)
        function = getattr(functional, name, None)
        if key is None or function is None:
            continue
        check, names = keys[key]
        functions[getattr(function, "__wrapped__", function)] = (key, check, names, renames)
    for function, key in _INDEXING.items():
        if key in keys:
            functions[function] = (key, *keys[key], None)
    return {"functions": functions, "methods": methods, "keys": keys}


def _match(node):
    targets = _targets()
    if node.op == "call_function":
        try:
            found = targets["functions"].get(node.target)
            if found is None and hasattr(node.target, "__wrapped__"):
                # A wrapper of an earlier guard() that Dynamo listed as a torch function.
                found = targets["functions"].get(node.target.__wrapped__)
            return found
        except TypeError:  # an unhashable target
            return None
    if node.op == "call_method":
        return targets["methods"].get(node.target)
    return None


def _bind(node, names, renames):
    """{check parameter name: (where in the node, value)}, or None when the call cannot be bound.

    `renames` is None for a builtin or method (its arguments are the check's, in order), else
    the functional form's parameters that the check names differently."""
    bound = {}
    if renames is not None:
        try:
            signature = inspect.signature(node.target)
            arguments = signature.bind(*node.args, **node.kwargs).arguments
        except (TypeError, ValueError):
            return None
        positions = list(signature.parameters)
        for name, value in arguments.items():
            checked_name = renames.get(name, name)
            if checked_name in names:
                index = positions.index(name)
                where = ("arg", index) if index < len(node.args) else ("kwarg", name)
                bound[checked_name] = (where, value)
        return bound
    for index, value in enumerate(node.args):
        if index >= len(names):
            return None
        bound[names[index]] = (("arg", index), value)
    for name, value in node.kwargs.items():
        if name not in names:
            return None
        bound[name] = (("kwarg", name), value)
    return bound


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
    from .._frames import is_user_file

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
        matched = _match(node)
        if matched is None:
            continue
        key, check, names, renames = matched
        bound = _bind(node, names, renames)
        if not bound:
            continue
        returned = _returned(bound, node.target in _INDEXING)
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


# --- where the rewrite hooks in ----------------------------------------------------------------


def _hook(original):
    def call_user_compiler(self, gm, example_inputs):
        if state.enabled:
            try:
                rewrite(gm)
            except Exception as error:  # noqa: BLE001 - never stop a compilation
                sys.stderr.write(f"assertscope: the compiled graph is not guarded ({type(error).__name__}: {error})\n")
        return original(self, gm, example_inputs)

    call_user_compiler.__wrapped__ = original
    return call_user_compiler


def _install_dynamo_hook():
    """Hooks the point where Dynamo hands a graph to the backend (once torch._dynamo is loaded)."""
    output_graph = sys.modules.get("torch._dynamo.output_graph")
    if output_graph is None or any(kind == "dynamo" for kind, _ in _installed):
        return
    OutputGraph = getattr(output_graph, "OutputGraph", None)
    original = vars(OutputGraph).get("call_user_compiler") if OutputGraph is not None else None
    if original is None:
        return
    if not hasattr(torch.ops.assertscope, "checked"):
        _installed.append(("library", _define_op()))
    from ._patching import replace

    _installed.append(("dynamo", replace(OutputGraph, "call_user_compiler", _hook(original))))


def _compile_wrapper(original):
    @functools.wraps(original)
    def compile(*args, **kwargs):
        with _lock:
            _install_dynamo_hook()
        result = original(*args, **kwargs)
        with _lock:
            _install_dynamo_hook()  # torch.compile imports torch._dynamo on first use
        return result

    return compile


def _forget_dynamo_trace_rules():
    """Dynamo resolves its table of torch functions by name once: built while other objects sat
    at torch.take & co. (the guard's wrappers, or the builtins), it no longer knows the current
    ones and breaks the graph at each of them. Rebuilt after the guard installs or removes them."""
    trace_rules = sys.modules.get("torch._dynamo.trace_rules")
    clear = getattr(trace_rules, "clear_lru_cache", None)
    if clear is not None:
        clear()


def _never_traced(functions):
    """Tells Dynamo to run these functions (the wrappers) and all they call as plain Python.

    Between two graphs of a compiled function (after a graph break: ctc_loss, one_hot without
    num_classes, print) Dynamo compiles every Python frame that runs, the wrappers' too. It
    would fold their `skip_call()` (torch.compiler.is_compiling()) to True and compile the
    wrapper into a direct call of the op: unchecked. Inside a graph the wrappers are not
    frames: Dynamo records them as the torch functions they stand for, and `rewrite` checks
    them. A flag on the code object, with no cost per call (PyTorch marks its own hooks so)."""
    eval_frame = getattr(getattr(torch._C, "_dynamo", None), "eval_frame", None)
    strategy = getattr(eval_frame, "_FrameExecStrategy", None)
    action = getattr(eval_frame, "_FrameAction", None)
    if strategy is None or action is None or not hasattr(eval_frame, "set_code_exec_strategy"):
        return  # an older PyTorch: its Dynamo compiles these frames as before
    skip = strategy(action.SKIP, action.SKIP)
    for code in {getattr(function, "__code__", None) for function in functions} - {None}:
        eval_frame.set_code_exec_strategy(code, skip)


def install():
    """Guards compiled graphs: now if torch._dynamo is loaded, else from the first torch.compile."""
    from ._install import wrappers
    from ._patching import replace

    _targets.cache_clear()  # each guard() puts new wrappers in place
    _forget_dynamo_trace_rules()
    _never_traced(wrappers())
    with _lock:
        if not any(kind == "compile" for kind, _ in _installed):
            _installed.append(("compile", replace(torch, "compile", _compile_wrapper(torch.compile))))
        _install_dynamo_hook()


def uninstall():
    with _lock:
        for kind, undo in reversed(_installed):
            if kind != "library":  # the op's definition stays: compiled graphs still call it
                undo()
        _installed[:] = [entry for entry in _installed if entry[0] == "library"]
    _forget_dynamo_trace_rules()
