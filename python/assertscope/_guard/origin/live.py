"""Live reads: the user's dataset object, still alive in the failing process, read at the bad
index: which of its tables hold the bad value there.

What: for each plain instance attribute (`vars(dataset)`: never a property, a descriptor or a
method) that is a list, a tuple, a tensor, a NumPy array, a pandas Series or DataFrame, or a
dict of those (one level: `self.data["labels"]`), the entry at the sample's index is read with
plain item access, and compared with the bad value.
Why: when the engine's path reads `self.labels[i]`, `dataset.labels[40] == 5` in the failing
process confirms that step instead of assuming it.
Safety: no user code runs: only built-in containers and the array types above are indexed
(by their exact types), each attribute is looked up in the instance's own `__dict__`.
Cost: error path only; a few item reads.
"""

import sys

import torch

from ..._summary import dtype_name
from .samples import matched

MAX_READS = 16


def _pandas_types():
    pandas = sys.modules.get("pandas")  # read only when the user uses it: never imported here
    return (pandas.Series, pandas.DataFrame) if pandas is not None else ()


def _numpy_array():
    numpy = sys.modules.get("numpy")
    return numpy.ndarray if numpy is not None else None


def _length(value):
    if type(value) in (list, tuple):
        return len(value)
    if type(value) in (torch.Tensor, torch.nn.Parameter):
        return value.shape[0] if value.dim() else None
    if _numpy_array() is not None and type(value) is _numpy_array():
        return value.shape[0] if value.ndim else None
    if type(value) in _pandas_types():
        return len(value)
    return None


def summary(value):
    """One line: `list[int] len=2000`, `tensor[2000] i64`, `ndarray[2000, 3] int64`,
    `Series[2000] int64`, `DataFrame[2000 x 3]`."""
    if type(value) in (list, tuple):
        kinds = sorted({type(v).__name__ for v in value[:64]})
        inner = kinds[0] if len(kinds) == 1 else "mixed" if kinds else ""
        return f"{type(value).__name__}[{inner}] len={len(value)}"
    if isinstance(value, torch.Tensor):
        return f"tensor[{', '.join(map(str, value.shape))}] {dtype_name(value.dtype)}"
    name = type(value).__name__
    if name == "DataFrame":
        return f"DataFrame[{value.shape[0]} x {value.shape[1]}]"
    shape = getattr(value, "shape", None)
    if shape is not None:
        return f"{name}[{', '.join(map(str, shape))}] {getattr(value, 'dtype', '')}".rstrip()
    return name


def _entry(value, index):
    """The entry of a table at `index` by plain item access, or (False, None)."""
    length = _length(value)
    if length is None or not -length <= index < length:
        return False, None
    if type(value) in _pandas_types():
        return True, value.iloc[index]
    return True, value[index]


def _plain(entry):
    """A read entry as JSON holds it: a number, or a short text."""
    if isinstance(entry, torch.Tensor):
        return entry.item() if entry.numel() == 1 else f"tensor[{', '.join(map(str, entry.shape))}]"
    if isinstance(entry, (bool, int, float, str)) or entry is None:
        return entry if not isinstance(entry, str) else entry[:80]
    item = getattr(entry, "item", None)
    if callable(item) and getattr(entry, "size", 2) == 1 and type(entry).__module__ == "numpy":
        return item()
    return type(entry).__name__


def _tables(dataset):
    """(attribute path, table) of the dataset's plain instance attributes."""
    fields = vars(dataset) if hasattr(dataset, "__dict__") else {}
    for name, value in fields.items():
        if type(value) is dict:
            for key, inner in list(value.items())[:32]:
                if isinstance(key, str):
                    yield f"{name}[{key!r}]", inner
        elif type(value) in _pandas_types() and type(value).__name__ == "DataFrame":
            for column in list(value.columns)[:32]:
                yield f"{name}[{column!r}]", value[column]
        else:
            yield name, value


def read(levels, wanted):
    """The live reads of every level of the chain: [(dataset, level dict)] -> [entries]."""
    found = []
    for dataset, level in levels:
        index = level.get("index")
        if index is None:
            continue
        for attribute, table in _tables(dataset):
            if len(found) >= MAX_READS:
                return found
            try:
                ok, entry = _entry(table, index)
                if not ok:
                    continue
                value = matched(entry, wanted)
                found.append(
                    {
                        "class": level["class"],
                        "attribute": attribute,
                        "index": index,
                        "value": _plain(entry) if value is None else _number(value),
                        "holds_bad_value": value is not None,
                        "summary": summary(table),
                    }
                )
            except Exception:  # noqa: BLE001 - a table we cannot read plainly: left out
                continue
    return found


def _number(value):
    if isinstance(value, float) and value != value:
        return "nan"
    return value
