"""The IPython extension: `%load_ext assertscope` in Jupyter, Colab, VS Code or a terminal.

Loading it switches the guard on for the kernel, shows a GuardError as a report (HTML in a
notebook: the cell's code with the failing line marked, the values and the fix; text in a
terminal), and adds `%assertscope` (alias `%explain`) to explain the last exception of the
session with the same knowledge base as the command line.
"""

import html
import os
import shutil
import subprocess
import sys
import traceback

from .errors import GuardError

# Errors after which the CUDA context of the process is lost: every later CUDA call fails
# with the same error until the process (the kernel) restarts.
_POISONED = (
    "device-side assert triggered",
    "an illegal memory access was encountered",
    "unspecified launch failure",
    "misaligned address",
    "an illegal instruction was encountered",
)

RESTART = (
    "The CUDA context of this kernel is lost: every later CUDA call fails with the same error, "
    "whatever the code. Restart the kernel, then run `%load_ext assertscope` before the "
    "training cells so the guard stops the bad value before a kernel sees it."
)

_loaded = {}


def load_ipython_extension(ipython):
    from . import _guard

    _guard.guard()
    ipython.set_custom_exc((GuardError,), _show_guard_error)
    ipython.register_magic_function(_explain_magic, "line", "assertscope")
    ipython.register_magic_function(_explain_magic, "line", "explain")
    _loaded["on"] = True


def unload_ipython_extension(ipython):
    from . import _guard

    ipython.set_custom_exc((), None)
    _guard.unguard()
    _loaded.pop("on", None)


def _rich(ipython):
    """Whether the front end draws HTML: every Jupyter kernel (Jupyter, Colab, VS Code)
    is an ipykernel shell; the terminal one is not."""
    return type(ipython).__name__ == "ZMQInteractiveShell"


def _show_guard_error(ipython, etype, value, tb, tb_offset=None):
    """IPython's custom exception handler: shows the error and returns its lines."""
    # IPython records these only for the exceptions it shows itself; %assertscope reads them.
    sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb
    text = str(value)
    if _rich(ipython):
        from IPython.display import display

        display({"text/html": guard_error_html(ipython, value, tb)}, raw=True)
        stb = [f"{etype.__name__}: {text.splitlines()[0] if text else ''} (report above)"]
    else:
        stb = [f"{etype.__name__}: {text}"]
    # The lines go out as the cell's error (so "run all" stops here, as for any exception).
    ipython._showtraceback(etype, value, stb)
    return stb


def _cell_of(ipython, tb):
    """(cell label, source lines, failing line) of the innermost frame of the traceback
    that runs code of a cell, or None."""
    import linecache

    cells = getattr(getattr(ipython, "compile", None), "_filename_map", {})
    found = None
    for frame, line in traceback.walk_tb(tb):
        name = frame.f_code.co_filename
        if name in cells:
            found = (name, line)
    if found is None:
        return None
    name, line = found
    lines = linecache.getlines(name)
    if not lines:
        return None
    return f"In [{cells[name]}]", lines, line


def guard_error_html(ipython, error, tb):
    """A GuardError as an HTML block: title, the cell with the failing line marked, what
    was found, the tensors and the fix."""
    d = error.diagnosis or {}
    esc = html.escape
    title = d.get("title") or str(error).splitlines()[0]
    parts = [
        '<div class="assertscope-guard-error" style="border-left:4px solid #c62828;'
        'padding:6px 10px;font-family:var(--jp-code-font-family,monospace);font-size:13px">',
        f'<div style="font-weight:bold;color:#c62828">GuardError[{esc(str(error.cause))}]: '
        f"{esc(str(error.op))}: {esc(title)}</div>",
    ]
    cell = _cell_of(ipython, tb)
    location = error.location or {}
    if cell is not None:
        label, lines, failing = cell
        parts.append(f'<div style="color:#555;margin-top:4px">{esc(label)}, line {failing}</div>')
        parts.append('<pre style="margin:2px 0;padding:0">')
        for number, source in enumerate(lines, 1):
            source = esc(source.rstrip("\n"))
            if number == failing:
                parts.append(
                    f'<span style="background:#ffebee;color:#b71c1c;font-weight:bold">'
                    f"{number:>3} &gt; {source}</span>"
                )
            else:
                parts.append(f'<span style="color:#444">{number:>3} | {source}</span>')
        parts.append("</pre>")
    elif location:
        parts.append(
            f'<div style="margin-top:4px">--&gt; {esc(str(location.get("file")))}:'
            f'{location.get("line")} <code>{esc(location.get("code") or "")}</code></div>'
        )
    evidence = d.get("evidence") or []
    rows = [e["text"] for e in evidence if e.get("kind") in ("guard", "tensor")]
    if rows:
        parts.append('<table style="margin-top:4px;border-collapse:collapse">')
        for i, row in enumerate(rows):
            key, _, rest = row.partition(": ")
            name = "found" if i == 0 else key
            shown = rest if rest else row
            parts.append(
                f'<tr><td style="padding:0 8px 0 0;color:#555;text-align:left">{esc(name)}</td>'
                f'<td style="text-align:left"><code>{esc(shown)}</code></td></tr>'
            )
        parts.append("</table>")
    if d.get("fix"):
        parts.append(f'<div style="margin-top:4px"><b>fix:</b> {esc(d["fix"])}</div>')
    parts.append(
        f'<div style="color:#777;margin-top:2px">`assertscope rules {esc(str(error.cause))}` '
        "explains this cause</div></div>"
    )
    return "\n".join(parts)


def _explain_magic(line=""):
    """%assertscope / %explain: explains the last exception of this session."""
    ipython = _ipython()
    etype, value, tb = getattr(sys, "last_type", None), getattr(sys, "last_value", None), getattr(sys, "last_traceback", None)
    if value is None:
        print("assertscope: no exception in this session yet")
        return
    if isinstance(value, GuardError):
        if ipython is not None and _rich(ipython):
            from IPython.display import display

            display({"text/html": guard_error_html(ipython, value, tb)}, raw=True)
        else:
            print(f"{etype.__name__}: {value}")
        return
    print(explain_text(_traceback_text(ipython, etype, value, tb)))
    if any(marker in str(value) for marker in _POISONED):
        print("\n" + RESTART)


def _traceback_text(ipython, etype, value, tb):
    """The traceback as the user saw it (`Cell In[7], line 12` rather than a temporary
    file name), which `explain` reads like any Jupyter traceback."""
    if ipython is not None:
        try:
            return "\n".join(ipython.InteractiveTB.structured_traceback(etype, value, tb)) + "\n"
        except Exception:  # an IPython without this API: the plain traceback below
            pass
    return "".join(traceback.format_exception(etype, value, tb))


def explain_text(log):
    """The command line's `assertscope explain` of a log text (a traceback)."""
    binary = binary_path()
    if binary is None:
        return (
            "assertscope: the assertscope binary was not found (install the package with pip, "
            "or set ASSERTSCOPE_BIN); the traceback alone:\n" + log
        )
    result = subprocess.run(
        [binary, "explain", "-"],
        input=log,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    out = result.stdout.rstrip("\n")
    if result.returncode == 1:
        return out or "assertscope: no device-side error in the last exception"
    if result.returncode != 0:
        return f"assertscope explain failed: {result.stderr.strip()}"
    return out


def binary_path():
    """ASSERTSCOPE_BIN, else the binary installed beside this Python, else one on PATH."""
    explicit = os.environ.get("ASSERTSCOPE_BIN")
    if explicit:
        return explicit
    beside = os.path.join(sys.prefix, "Scripts" if os.name == "nt" else "bin", "assertscope")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    return shutil.which("assertscope")


def _ipython():
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()
