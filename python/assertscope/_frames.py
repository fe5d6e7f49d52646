"""Finding the user's own line: the deepest frame outside the standard library, installed
packages, torch and assertscope itself.

`capture()` is cheap enough to run at every guarded call in async mode: it walks
`f_back` pointers and classifies each code object once (cached by file name).
"""

import os
import sys

_user_file_cache = {}
_skip_roots = None
_roots_saw_torch = False


def _roots():
    global _skip_roots, _roots_saw_torch
    # Recomputed once torch is imported: a source build of torch lives outside site-packages.
    if _skip_roots is None or (not _roots_saw_torch and "torch" in sys.modules):
        _roots_saw_torch = "torch" in sys.modules
        _user_file_cache.clear()
        import sysconfig

        roots = set()
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            path = sysconfig.get_paths().get(key)
            if path:
                roots.add(os.path.normcase(os.path.realpath(path)))
        here = os.path.dirname(os.path.abspath(__file__))
        roots.add(os.path.normcase(os.path.realpath(here)))
        torch = sys.modules.get("torch")
        torch_file = getattr(torch, "__file__", None)
        if torch_file:
            roots.add(os.path.normcase(os.path.realpath(os.path.dirname(torch_file))))
        _skip_roots = tuple(sorted(root.rstrip(os.sep) + os.sep for root in roots))
    return _skip_roots


def is_user_file(filename):
    """True for a file the user wrote (a script, a notebook cell, `python -c` code)."""
    known = _user_file_cache.get(filename)
    if known is not None:
        return known
    if filename.startswith("<"):
        # <stdin>, <string>, <ipython-input-...> are the user's; <frozen importlib...> is not.
        result = not filename.startswith("<frozen")
    else:
        path = os.path.normcase(os.path.realpath(filename))
        parts = path.split(os.sep)
        result = not (
            "site-packages" in parts or "dist-packages" in parts or path.startswith(_roots())
        )
    _user_file_cache[filename] = result
    return result


def capture(depth=1):
    """(file, line, function) of the innermost user frame above the caller, or None."""
    try:
        frame = sys._getframe(depth + 1)
    except ValueError:
        return None
    while frame is not None:
        code = frame.f_code
        if is_user_file(code.co_filename):
            return (code.co_filename, frame.f_lineno, code.co_name)
        frame = frame.f_back
    return None


def location_dict(captured):
    """The Diagnosis `location` object for a captured frame (None stays None)."""
    if captured is None:
        return None
    filename, line, function = captured
    shown = display_path(filename)
    code = source_line(shown, line)
    return {"file": shown, "line": line, "function": function, "code": (code.strip() or None) if code else None}


# Display names that are not paths (a notebook cell's "Cell In[7]") and the file names
# linecache knows their lines by.
_real_names = {}


def display_path(filename):
    """A path relative to the working directory when the file lies under it; a notebook
    cell as IPython's tracebacks name it, `Cell In[7]`."""
    cell = _cell_name(filename)
    if cell is not None:
        _real_names[cell] = filename
        return cell
    if filename.startswith("<"):
        return filename
    try:
        relative = os.path.relpath(filename)
    except ValueError:  # another drive on Windows
        return filename
    return filename if relative.startswith(os.pardir) else relative


def _cell_name(filename):
    """`Cell In[N]` for the code of a notebook cell: IPython 8's temporary files (known to
    its compiler by execution count) and IPython 7's `<ipython-input-N-...>`."""
    if filename.startswith("<ipython-input-"):
        count = filename[len("<ipython-input-") :].split("-", 1)[0]
        return f"Cell In[{count}]" if count.isdigit() else None
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    shell = get() if get is not None else None
    cells = getattr(getattr(shell, "compile", None), "_filename_map", None)
    count = cells.get(filename) if isinstance(cells, dict) else None
    return f"Cell In[{count}]" if count is not None else None


def source_line(shown, line):
    """Line `line` of a file named as display_path names it (a cell's lines too), without
    its line break; None when it cannot be read."""
    import linecache

    filename = _real_names.get(shown, shown)
    if not line or (filename.startswith("<") and filename not in linecache.cache):
        return None
    text = linecache.getline(filename, line)
    return text.rstrip("\r\n") if text else None
