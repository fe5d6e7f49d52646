"""The facts about the failing call itself: the user's frames with the locals that hold the
failing tensor, the text of sources that are not files, which argument of the op it was,
and when the process started.

What (each a field of the report's `runtime` block, see the origin protocol):
  frames         the user's frames of the failing call, innermost first, each stamped with
                 its file's size and mtime at failure time, and the names (or container
                 paths: `batch["labels"]`, `batch[1]`) that hold the failing tensor
  sources        notebook cells and `exec` strings, from linecache
  operand        the op's parameter holding the bad value, and its position
  process_start  when this process started (a source file changed after it is stale)
Why: the engine proves the path from the source; these tie it to what ran (which local,
which file version).
Cost: error path only.
"""

import collections.abc
import linecache
import os

from ... import _frames

MAX_FRAMES = 16
MAX_HOLDERS = 8


def user_frames(frame):
    """The live user frames from `frame` outwards."""
    while frame is not None:
        if _frames.is_user_file(frame.f_code.co_filename):
            yield frame
        frame = frame.f_back


def live_frames(location, start):
    """The user frames of the failing call when it is still on the stack (the guard raised
    at the call: sync mode), else [] (the asynchronous guard raises later, elsewhere)."""
    if not location:
        return []
    frames = list(user_frames(start))[:MAX_FRAMES]
    if frames and _frames.display_path(frames[0].f_code.co_filename) == location.get("file") and frames[0].f_lineno == location.get("line"):
        return frames
    return []


def _same(value, target):
    """`value` is the target, or the tensor the target is a view of."""
    return value is target or (getattr(target, "_base", None) is not None and value is target._base)


def _paths(name, value, target, depth=2):
    """Container paths under `name` to the target: `batch["labels"]`, `batch[1]`."""
    if _same(value, target):
        yield name
        return
    if not depth:
        return
    pairs = mapping_items(value)
    if pairs is not None:
        items = [(f"{name}[{key!r}]", item) for key, item in pairs[:64] if isinstance(key, (str, int))]
    elif type(value) in (list, tuple) or (isinstance(value, tuple) and hasattr(value, "_fields")):
        items = [(f"{name}[{k}]", item) for k, item in enumerate(value[:64])]
    else:
        return
    for path, item in items:
        yield from _paths(path, item, target, depth - 1)


def mapping_items(value):
    """The (key, value) pairs of a dict, or of a UserDict's dict (transformers'
    BatchEncoding), read from the dict's own storage: a subclass's `items()` or
    `__getitem__` is never run (transformers' model mappings import a module per key, and
    may raise). None for anything else."""
    if isinstance(value, dict):
        return list(dict.items(value))
    data = vars(value).get("data") if hasattr(value, "__dict__") and isinstance(value, collections.abc.Mapping) else None
    return list(dict.items(data)) if isinstance(data, dict) else None


def holders(frame, target):
    """The locals of `frame` (or container paths into them) holding `target`."""
    found = []
    for name, value in list(frame.f_locals.items()):
        for path in _paths(name, value, target):
            if len(found) < MAX_HOLDERS:
                found.append(path)
    return found


def stamp(filename):
    """{"size", "mtime_ns"} of a file on disk, else {}."""
    if filename.startswith("<"):
        return {}
    try:
        status = os.stat(filename)
    except OSError:
        return {}
    return {"size": status.st_size, "mtime_ns": status.st_mtime_ns}


def frame_entries(frames, target, location):
    """The `frames` field: the live frames with holders, or the location alone."""
    if not frames:
        if not location or not location.get("file"):
            return []
        filename = absolute(location["file"])
        return [{"file": filename, "line": location.get("line"), "function": location.get("function"), **stamp(filename)}]
    entries = []
    for frame in frames:
        filename = frame.f_code.co_filename
        entry = {"file": absolute(filename), "line": frame.f_lineno, "function": frame.f_code.co_name, **stamp(filename)}
        entry["holders"] = holders(frame, target) if target is not None else []
        entries.append(entry)
    return entries


def absolute(filename):
    return filename if filename.startswith("<") else os.path.abspath(filename)


def sources(filenames):
    """The text of every named file that is not on disk (notebook cells, exec strings)."""
    found = {}
    for filename in dict.fromkeys(filenames):
        if not filename or os.path.isfile(filename):
            continue
        text = "".join(linecache.getlines(filename))
        if text:
            found[filename] = text
    return found


def operand(call, tensor):
    """{"parameter", "index"} of the op's argument that holds the failing tensor."""
    for exact in (True, False):
        for position, name in enumerate(call.names):
            try:
                value = call.get(name)
            except (ValueError, IndexError):
                continue
            if value is tensor if exact else (value is not None and _same(value, tensor)):
                return {"parameter": name, "index": position}
    return None


def process_start():
    """This process's start time (Unix seconds): from /proc where there is one, else from
    psutil when it is installed, else None."""
    try:
        with open("/proc/self/stat", encoding="ascii") as handle:
            ticks = int(handle.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat", encoding="ascii") as handle:
            boot = next(int(line.split()[1]) for line in handle if line.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        pass
    try:
        import psutil

        return psutil.Process().create_time()
    except Exception:  # noqa: BLE001 - not installed, or not allowed to read it
        return None
