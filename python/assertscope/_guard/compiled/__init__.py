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
import sys
import threading

import torch

from .._state import state
from .graph import guarded_ops_in, rewrite
from .op import OP_NAME, define_op
from .targets import guarded_targets

__all__ = ["install", "uninstall", "rewrite", "guarded_ops_in", "OP_NAME"]

_lock = threading.Lock()
_installed = []


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
        _installed.append(("library", define_op()))
    from .._patching import replace

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
    from .._install import wrappers
    from .._patching import replace

    guarded_targets.cache_clear()  # each guard() puts new wrappers in place
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
