"""Installing the guard: each guarded op is replaced, where Python looks it up, by a small
wrapper that runs its check and then the original.

Only the ops in the checks' tables are touched; everything else keeps running at full
speed (no TorchFunctionMode over every op). The places were chosen so that every usual way
of calling an op reaches a wrapper:
  * F.cross_entropy, F.nll_loss, F.binary_cross_entropy, F.multi_margin_loss,
    F.max_unpool*d call `torch._C._nn.<kernel>` at run time: the wrapper sits there, so it
    also catches nn.CrossEntropyLoss & co. and functions imported with
    `from torch.nn.functional import cross_entropy` before the guard was switched on;
  * F.embedding, F.embedding_bag, F.ctc_loss call `torch.embedding`, `torch.embedding_bag`,
    `torch.ctc_loss` at run time: same;
  * torch.gather & co. are replaced in the torch namespace, and Tensor methods
    (x.gather, x[idx], x.index_add_) on torch.Tensor, which every tensor and nn.Parameter
    inherits from.
A builtin bound to another name before the guard started (`from torch import gather`) is
not seen; `assertscope run` switches the guard on as torch is imported, before user code.
"""

import torch

from ..errors import GuardError
from ._call import Call, runs_on_cpu
from ._patching import Patches, current, resolve, wraps
from ._ledger import ledgers
from ._runner import explain_cpu_refusal, run
from ._state import skip_call, state

__all__ = ["install", "uninstall", "installed"]

_patches = Patches()
_jit_ids = []
_wrappers = []


def guarded(check, original, names, writes_input):
    """The wrapper for one op: its check, then the original."""

    quick = check.quick
    checked_by_cpu_kernel = check.checked_by_cpu_kernel
    # The usual test (is the first argument a CPU tensor?) is inlined below: after an op with
    # a large kernel every Python frame on the way costs about a microsecond.
    any_cpu_tensor_first = checked_by_cpu_kernel is runs_on_cpu
    Tensor = torch.Tensor

    def guarded_call(*args, **kwargs):
        # `original(*args)` when there are no keywords: an empty **{} sends PyTorch's argument
        # parser down its keyword path, which costs 1-2 us on ops with several overloads
        # (quantile); bench/guard/passthrough.py measures it.
        try:
            if (
                checked_by_cpu_kernel is not None
                and not ledgers  # with state.mode: _runner.cpu_calls_left_to_pytorch, inlined
                and state.mode == "auto"
                and (
                    (args and isinstance(args[0], Tensor) and args[0].is_cpu)
                    if any_cpu_tensor_first
                    else checked_by_cpu_kernel(args, kwargs)
                )
            ):
                # run_on_cpu, inlined: the call runs as unguarded; its refusal is explained
                try:
                    return original(*args, **kwargs) if kwargs else original(*args)
                except Exception as error:
                    explain_cpu_refusal(check, original, names, args, kwargs, writes_input, error)
                    raise
            if skip_call():
                return original(*args, **kwargs) if kwargs else original(*args)
            call = Call(names, args, kwargs)
            if ledgers:
                return run(check, original, call, writes_input)  # (polls them first)
            if quick(call):
                return original(*args, **kwargs) if kwargs else original(*args)
            return run(check, original, call, writes_input, asked_quick=True)
        except GuardError as error:
            # Raised again from here, the error's traceback holds one frame of the guard
            # (this one) instead of its whole way down; _hide drops this one too before
            # Python or IPython prints it, and pytest leaves out a frame that says so:
            __tracebackhide__ = True  # noqa: F841
            raise error.with_traceback(None)  # noqa: B904 - the same error, not a new one

    return wraps(guarded_call, original)


def _register_with_torchscript(wrapper, original):
    """torch.jit.script resolves torch.gather & co. by identity; point it at the wrapper too."""
    try:
        from torch.jit import _builtins

        name = _builtins._find_builtin(original)
        if name is not None:
            _builtins._get_builtin_table()[id(wrapper)] = name
            _jit_ids.append(id(wrapper))
    except Exception:  # noqa: BLE001 - scripting support is a courtesy, never a reason to fail
        pass


def install():
    """Puts every check's wrappers in place (idempotent)."""
    if _patches:
        return
    from .checks import PATCHES

    # One builtin reachable under two names (F.one_hot is torch._C._nn.one_hot) gets one
    # wrapper: torch.compile knows the op by one of its names, and a second wrapper object
    # under the other would be unknown to it (a graph break, and the op unchecked).
    wrappers = {}
    for owner_path, name, check, names in PATCHES:
        try:
            owner = resolve(owner_path)
            original = current(owner, name)
        except (ImportError, AttributeError):
            continue  # an op this torch does not have
        shared = (id(original), id(check), names)
        wrapper = wrappers.get(shared)
        if wrapper is None:
            make = getattr(check, "wrapper", None)
            special = make(original) if make else None
            wrapper = wraps(special, original) if special else guarded(check, original, names, name.endswith("_"))
            wrappers[shared] = wrapper
            _wrappers.append(wrapper)
        _patches.replace(owner, name, wrapper)
        _register_with_torchscript(wrapper, original)
    from . import _verified  # second handles on memory that bypass version counters

    for owner_path, name, replacement in _verified.alias_patches():
        try:
            _patches.replace(resolve(owner_path), name, replacement)
        except (ImportError, AttributeError):
            continue
    from .checks import WRAPPING

    for module in WRAPPING:
        module.install()
        _patches.also_undo(module.uninstall)
    from . import origin  # construction stacks and DataLoader batches, for the error path

    origin.install()
    from .. import _hide, _ipython  # its frames out of tracebacks, its wrappers out of warnings

    _hide.install()
    shell = _hide.ipython_shell()
    if shell is not None and not getattr(shell, "custom_exceptions", ()):
        _ipython.show_guard_errors(shell)  # a GuardError drawn as its report in IPython too
    _patches.also_undo(origin.uninstall)


def uninstall():
    _wrappers.clear()
    _patches.undo()
    try:
        from torch.jit import _builtins

        table = _builtins._get_builtin_table()
        while _jit_ids:
            table.pop(_jit_ids.pop(), None)
    except Exception:  # noqa: BLE001
        _jit_ids.clear()


def installed():
    return bool(_patches)


def wrappers():
    """The wrapper functions in place (for the compiled package, which keeps Dynamo out of them)."""
    return list(_wrappers)
