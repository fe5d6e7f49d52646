"""A guarded call's arguments, and the interface every check implements."""

__all__ = ["Call", "Check"]


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

    op             the op's name in messages and diagnoses
    pytorch_error  the exception type PyTorch's CPU kernel raises for the same bad value
                   (IndexError for most lookups): the GuardError is an instance of it too
    rules          (call) -> [Rule], from shapes and dtypes only (no device reads)
    explain        (call, rule) -> Finding, on the error path
    """

    op = "?"
    pytorch_error = RuntimeError
    # PyTorch's CPU kernel refuses the values this check refuses (its message is then
    # quoted); False where it reads them unchecked.
    cpu_checks_values = True

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
