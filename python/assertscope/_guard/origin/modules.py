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

_sites = weakref.WeakKeyDictionary()  # module -> ((file, line, function), ...) innermost first
_undo = []


def _user_frames(limit=2):
    """The innermost user frame and, when it is a constructor, the first user frame outside
    constructors (where the top-level model was built, and the size usually chosen)."""
    frame = sys._getframe(2)
    found = []
    while frame is not None and len(found) < limit:
        code = frame.f_code
        if _frames.is_user_file(code.co_filename):
            if not found or found[-1][2] == "__init__":
                found.append((code.co_filename, frame.f_lineno, code.co_name))
            else:
                break
        frame = frame.f_back
    return tuple(found)


def _recording(original):
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        try:
            _sites[self] = _user_frames()
        except TypeError:  # an instance that cannot be weakly referenced: not recorded
            pass

    __init__.__wrapped__ = original
    __init__.__doc__ = original.__doc__
    __init__.__qualname__ = original.__qualname__
    return __init__


def install():
    if _undo:
        return
    for name in TRACKED:
        cls = getattr(nn, name, None)
        if cls is None or "__init__" not in vars(cls):
            continue
        original = vars(cls)["__init__"]
        cls.__init__ = _recording(original)
        _undo.append((cls, original))


def uninstall():
    while _undo:
        cls, original = _undo.pop()
        if getattr(cls.__init__, "__wrapped__", None) is original:
            cls.__init__ = original


def created_with(module):
    """`nn.Linear(in_features=64, out_features=10)` from the module's own attributes."""
    kind = type(module)
    base = next((c for c in kind.__mro__ if c.__module__.startswith("torch.nn") and c.__name__ in TRACKED), kind)
    parts = []
    for attribute in TRACKED.get(base.__name__, ()):
        value = getattr(module, attribute, None)
        if value is not None:
            parts.append(f"{attribute}={value}")
    return f"nn.{base.__name__}({', '.join(parts)})"


def sites(module):
    return _sites.get(module, ())


def recorded(kind_names):
    """(module, sites) of every live recorded module of the given type names."""
    found = []
    for module, where in list(_sites.items()):
        if any(c.__name__ in kind_names and c.__module__.startswith("torch.nn") for c in type(module).__mro__):
            found.append((module, where))
    return found


def owner_of(parameter):
    """The recorded module whose `weight` is this tensor (or None)."""
    for module, where in list(_sites.items()):
        if getattr(module, "weight", None) is parameter:
            return module, where
    return None


def producer_of(tensor, kind_names, depth=12):
    """The recorded module whose weight made `tensor`, found through its autograd graph
    (logits -> AddmmBackward -> the head's weight). None without a graph or a match."""
    node = getattr(tensor, "grad_fn", None)
    seen = 0
    queue = [node] if node is not None else []
    weights = {}
    for module, where in recorded(kind_names):
        weight = getattr(module, "weight", None)
        if weight is not None:
            weights[id(weight)] = (module, where)
    while queue and seen < depth * 4:
        node = queue.pop(0)
        seen += 1
        variable = getattr(node, "variable", None)
        if variable is not None and id(variable) in weights:
            return weights[id(variable)]
        for child, _ in getattr(node, "next_functions", ()):
            if child is not None:
                queue.append(child)
    return None
