"""A guarded call's arguments, and the interface every check implements."""

import torch

__all__ = ["Call", "Check", "runs_on_cpu"]


def runs_on_cpu(args, kwargs):
    """True if the call runs on the CPU: its first argument (the tensor read or written,
    whose device the kernel follows) is a CPU tensor."""
    return bool(args) and isinstance(args[0], torch.Tensor) and args[0].is_cpu


class Call:
    """The arguments of one call, addressable by parameter name."""

    __slots__ = ("names", "args", "kwargs")

    def __init__(self, names, args, kwargs):
        self.names = names
        self.args = args
        self.kwargs = kwargs

    def has(self, name):
        i = self.names.index(name)
        return i < len(self.args) or name in self.kwargs

    def get(self, name, default=None):
        i = self.names.index(name)
        if i < len(self.args):
            return self.args[i]
        return self.kwargs.get(name, default)

    def replaced(self, name, value):
        i = self.names.index(name)
        if i < len(self.args):
            args = list(self.args)
            args[i] = value
            return Call(self.names, tuple(args), self.kwargs)
        kwargs = dict(self.kwargs)
        kwargs[name] = value
        return Call(self.names, self.args, kwargs)


class Check:
    """One guarded op. Subclasses say which rules its kernel asserts and explain failures.

    op                    the op's name in messages and diagnoses
    pytorch_error         the exception type PyTorch's CPU kernel raises for the same bad
                          value (IndexError for most lookups): the GuardError is an instance
                          of it too
    checked_by_cpu_kernel (args, kwargs) -> bool, or None: see below
    rules                 (call) -> [Rule], from shapes and dtypes only (no device reads)
    explain               (call, rule) -> Finding, on the error path
    """

    op = "?"
    pytorch_error = RuntimeError
    # True for a call that runs on the CPU, whose kernel refuses every value this check's
    # rules refuse, before reading it. In the "auto" mode such a call runs unchecked,
    # exactly as unguarded (a CPU kernel's refusal poisons nothing), and the rules only run
    # to explain the refusal. None where the CPU kernel reads some bad values unchecked:
    # those calls are checked first, as on CUDA.
    checked_by_cpu_kernel = staticmethod(runs_on_cpu)

    def rules(self, call):
        raise NotImplementedError

    def quick(self, call):
        """True if every rule of the call is already known to hold from a remembered range
        of the very same index tensor (_verified): the op then runs with no check at all.
        Must never be True where rules() would give a rule that fails; False is always safe."""
        return False

    def explain(self, call, rule):
        raise NotImplementedError

    def call_with(self, call, name, value):
        """Hook for checks whose repaired argument lives inside another (index tuples)."""
        return call.replaced(name, value)
