"""The chain of datasets under a DataLoader's: Subset / random_split, ConcatDataset down to
the user's class, with the index of one sample at each level.

What: `unwrap(dataset, index)` follows PyTorch's wrappers by their own fields (a Subset's
`indices`, a ConcatDataset's `cumulative_sizes`), never by calling `__getitem__` or any
user code, and stops at the first dataset that is not such a wrapper: the user's class, a
TensorDataset, a Hugging Face `datasets.Dataset`.
Why: the index the sampler gave is the outermost dataset's; the user reads their own
class's table at another one (`Subset(data, idx)[17]` is `data[37]`). The engine follows
the path into the user's `__getitem__` and `__init__` from the last level.
Cost: error path only.
"""

import bisect
import inspect

from ... import _frames

MAX_DEPTH = 8  # wrappers followed


def _index(value):
    """An index as an int (a Subset's indices may be a list, a tensor or an array)."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _inner(dataset, index):
    """(the wrapped dataset, the index there) for PyTorch's index wrappers, else None."""
    from torch.utils.data import ConcatDataset, Subset

    fields = vars(dataset) if hasattr(dataset, "__dict__") else {}
    if isinstance(dataset, Subset) and "dataset" in fields and "indices" in fields:
        indices = fields["indices"]
        if -len(indices) <= index < len(indices):
            return fields["dataset"], _index(indices[index])
        return None
    if isinstance(dataset, ConcatDataset) and "datasets" in fields and "cumulative_sizes" in fields:
        sizes = fields["cumulative_sizes"]
        if index < 0:
            index += sizes[-1] if sizes else 0
        part = bisect.bisect_right(sizes, index)
        if not 0 <= index or part >= len(sizes):
            return None
        return fields["datasets"][part], index - (sizes[part - 1] if part else 0)
    return None


def _method_line(cls, name):
    """The first line of `cls.name` when the user wrote it (looked up without running it)."""
    for owner in cls.__mro__:
        function = vars(owner).get(name)
        if function is None:
            continue
        code = getattr(inspect.unwrap(function), "__code__", None) if callable(function) else None
        if code is not None and _frames.is_user_file(code.co_filename):
            return code.co_filename, code.co_firstlineno
        return None
    return None


def level(dataset, index):
    """One level of the chain: its class, module and index, and for a class the user wrote,
    its file and the first lines of `__init__` and `__getitem__`."""
    cls = type(dataset)
    entry = {"class": cls.__name__, "module": cls.__module__, "index": index}
    getitem = _method_line(cls, "__getitem__")
    if getitem is not None:
        entry["file"] = getitem[0]
        init = _method_line(cls, "__init__")
        if init is not None and init[0] == getitem[0]:
            entry["init_line"] = init[1]
        entry["getitem_line"] = getitem[1]
    return entry


def unwrap(dataset, index):
    """[(dataset object, level dict)], outermost first, for one sample's index."""
    found = []
    while dataset is not None and index is not None and len(found) < MAX_DEPTH:
        found.append((dataset, level(dataset, index)))
        try:
            inner = _inner(dataset, index)
        except Exception:  # noqa: BLE001 - a wrapper whose fields are not what PyTorch's are
            inner = None
        if inner is None:
            break
        dataset, index = inner
    return found
