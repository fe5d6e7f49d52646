"""Which nodes of a Dynamo graph are guarded ops, and how their arguments bind to the
parameters of the check that guards them."""

import functools
import inspect
import operator

import torch

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
# Tensor indexing: Dynamo records `x[idx]` and `x[idx] = v` as these, with the check's parameters.
INDEXING = {operator.getitem: "torch.Tensor.__getitem__", operator.setitem: "torch.Tensor.__setitem__"}


@functools.lru_cache(maxsize=1)
def guarded_targets():
    """{"functions": {callable: (key, check, names, renames or None)}, "methods": {name: ...},
    "keys": {key: (check, names)}} for every guarded op a graph can contain."""
    from .._patching import resolve
    from ..checks import PATCHES

    functions, methods, keys = {}, {}, {}
    by_owner = {}
    for owner_path, name, check, names in PATCHES:
        key = f"{owner_path}.{name}"
        if getattr(check, "wrapper", None) is not None:
            # Tensor indexing: in graphs as operator.getitem / setitem (see INDEXING).
            if owner_path == "torch.Tensor" and key in INDEXING.values():
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
    for function, key in INDEXING.items():
        if key in keys:
            functions[function] = (key, *keys[key], None)
    return {"functions": functions, "methods": methods, "keys": keys}


def match(node):
    found_in = guarded_targets()
    if node.op == "call_function":
        try:
            found = found_in["functions"].get(node.target)
            if found is None and hasattr(node.target, "__wrapped__"):
                # A wrapper of an earlier guard() that Dynamo listed as a torch function.
                found = found_in["functions"].get(node.target.__wrapped__)
            return found
        except TypeError:  # an unhashable target
            return None
    if node.op == "call_method":
        return found_in["methods"].get(node.target)
    return None


def bind(node, names, renames):
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
