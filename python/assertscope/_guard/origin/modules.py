"""Where the modules whose sizes the guard checks were built: `nn.Linear(64, 10)` at
model.py:14, called from train.py:40.

What: the constructors of the module types that fix a size a kernel asserts against (class
heads, embedding tables, position tables, recurrent layers, BatchNorm, the losses that carry
ignore_index / blank) record the user's frames that built each instance.
Why: when a label is past the head or an id past the table, the line to change is where the
head or table was sized, not the loss or lookup that failed.
Cost: one walk up the stack per construction of these types only; nothing at forward time.
"""

import sys
import weakref

import torch.nn as nn

from ... import _frames
from .._patching import Patches

# Module type -> the attributes that say what it was created with, in constructor order.
TRACKED = {
    "Linear": ("in_features", "out_features"),
    "LazyLinear": ("out_features",),
    "Bilinear": ("in1_features", "in2_features", "out_features"),
    "Conv1d": ("in_channels", "out_channels", "kernel_size"),
    "Conv2d": ("in_channels", "out_channels", "kernel_size"),
    "Conv3d": ("in_channels", "out_channels", "kernel_size"),
    "Embedding": ("num_embeddings", "embedding_dim"),
    "EmbeddingBag": ("num_embeddings", "embedding_dim"),
    "LSTM": ("input_size", "hidden_size", "num_layers", "batch_first"),
    "GRU": ("input_size", "hidden_size", "num_layers", "batch_first"),
    "RNN": ("input_size", "hidden_size", "num_layers", "batch_first"),
    "BatchNorm1d": ("num_features",),
    "BatchNorm2d": ("num_features",),
    "BatchNorm3d": ("num_features",),
    "CrossEntropyLoss": ("ignore_index",),
    "NLLLoss": ("ignore_index",),
    "CTCLoss": ("blank",),
}

MAX_SITES = 12  # user frames kept per construction

_sites = weakref.WeakKeyDictionary()  # module -> ((file, line, function), ...) innermost first
# weight -> what its module was built with: outlives a module built inline (`Net()(x)`)
# while its output's autograd graph keeps the weight alive.
_by_weight = {}  # id(weight) -> (weak reference, Built); tensors cannot be weak dict keys
_patches = Patches()


class Built:
    """A tracked module as it was constructed: its torch.nn class, the values of its size
    attributes (TRACKED's order) and the user's frames that built it, innermost first."""

    __slots__ = ("base", "values", "sites")

    def __init__(self, base, values, sites):
        self.base = base
        self.values = values
        self.sites = sites

    def get(self, attribute):
        names = TRACKED.get(self.base, ())
        return self.values[names.index(attribute)] if attribute in names else None

    def describe(self):
        """`nn.Linear(in_features=64, out_features=10)`."""
        parts = [f"{a}={v}" for a, v in zip(TRACKED.get(self.base, ()), self.values) if v is not None]
        return f"nn.{self.base}({', '.join(parts)})"


def _user_stack():
    """The user's frames of the constructor's caller, innermost first, up to the top: a
    nested model (`Head.__init__` <- `Model.__init__` <- `main`) keeps every level, so that
    a size can be followed from the layer to the caller that chose it."""
    frame = sys._getframe(2)
    found = []
    while frame is not None and len(found) < MAX_SITES:
        code = frame.f_code
        if _frames.is_user_file(code.co_filename):
            found.append((code.co_filename, frame.f_lineno, code.co_name))
        frame = frame.f_back
    return tuple(found)


def _recording(original):
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        try:
            sites = _sites[self] = _user_stack()
            weight = getattr(self, "weight", None)
            if weight is not None:
                key = id(weight)
                forget = lambda _ref, key=key: _by_weight.pop(key, None)  # noqa: E731
                # The values, not the text: it is formatted on the error path only.
                _by_weight[key] = (weakref.ref(weight, forget), Built(_base_name(type(self)), _values(self), sites))
        except TypeError:  # an instance that cannot be weakly referenced: not recorded
            pass

    __init__.__wrapped__ = original
    __init__.__doc__ = original.__doc__
    __init__.__qualname__ = original.__qualname__
    return __init__


def install():
    if _patches:
        return
    for name in TRACKED:
        cls = getattr(nn, name, None)
        if cls is None:
            continue
        # BatchNorm1d & co. inherit theirs: wrapped on the class, deleted again on undo.
        _patches.replace(cls, "__init__", _recording(cls.__init__))


def uninstall():
    _patches.undo()


_bases = {}


def _base_name(kind):
    """The tracked torch.nn class a module type is (a user's subclass of nn.Linear: Linear)."""
    name = _bases.get(kind)
    if name is None:
        base = next((c for c in kind.__mro__ if c.__module__.startswith("torch.nn") and c.__name__ in TRACKED), kind)
        name = _bases[kind] = base.__name__
    return name


def _values(module):
    return tuple(getattr(module, a, None) for a in TRACKED.get(_base_name(type(module)), ()))


def built(module):
    """The Built record of a live module (its sizes now, its recorded sites)."""
    return Built(_base_name(type(module)), _values(module), _sites.get(module, ()))


def recorded(kind_names):
    """The Built record of every live recorded module of the given type names."""
    found = []
    for module, where in list(_sites.items()):
        if any(c.__name__ in kind_names and c.__module__.startswith("torch.nn") for c in type(module).__mro__):
            found.append(Built(_base_name(type(module)), _values(module), where))
    return found


def owner_of(parameter):
    """The Built record of the recorded module whose `weight` is this tensor, or None."""
    entry = _by_weight.get(id(parameter))
    if entry is None or entry[0]() is not parameter:
        return None
    return entry[1]


def producer_of(tensor, kind_names, depth=12):
    """The Built record of the recorded module whose weight made `tensor`, found through its
    autograd graph (logits -> AddmmBackward -> the head's weight), or None."""
    node = getattr(tensor, "grad_fn", None)
    seen = 0
    queue = [node] if node is not None else []
    while queue and seen < depth * 4:
        node = queue.pop(0)
        seen += 1
        variable = getattr(node, "variable", None)
        found = owner_of(variable) if variable is not None else None
        if found is not None and found.base in kind_names:
            return found
        for child, _ in getattr(node, "next_functions", ()):
            if child is not None:
                queue.append(child)
    return None
