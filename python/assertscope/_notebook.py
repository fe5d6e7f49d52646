"""The IPython extension: `%load_ext assertscope` in Jupyter, Colab, VS Code or a terminal.

Loading it switches the guard on for the kernel, shows a GuardError as its report (the same
text as in a terminal; in a notebook as text and as HTML, below the traceback without the
guard's frames), and adds `%assertscope` (alias `%explain`) to explain the last exception
of the session with the same knowledge base as the command line. A cell is named as
IPython's tracebacks name it, `Cell In[7]`.
"""

import os
import shutil
import subprocess
import sys
import traceback

from . import _ipython
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
    _ipython.show_guard_errors(ipython)
    ipython.register_magic_function(_explain_magic, "line", "assertscope")
    ipython.register_magic_function(_explain_magic, "line", "explain")
    _loaded["on"] = True


def unload_ipython_extension(ipython):
    from . import _guard

    ipython.set_custom_exc((), None)
    _guard.unguard()
    _loaded.pop("on", None)


def _explain_magic(line=""):
    """%assertscope / %explain: explains the last exception of this session."""
    ipython = _shell()
    etype, value, tb = getattr(sys, "last_type", None), getattr(sys, "last_value", None), getattr(sys, "last_traceback", None)
    if value is None:
        print("assertscope: no exception in this session yet")
        return
    if isinstance(value, GuardError):
        from .errors import full_report

        report = full_report(value)
        if ipython is not None and _ipython.rich(ipython):
            _ipython.display_report(report)
        else:
            print(report)
        return
    out, status = explain_text(_traceback_text(ipython, etype, value, tb))
    if status == 1:
        first = (str(value).splitlines() or [""])[0]
        print(
            f"assertscope: the last exception ({etype.__name__}{': ' + first if first else ''}) is a plain Python "
            "error, not a tensor or CUDA error: there is nothing for assertscope to add to its traceback."
        )
    else:
        print(out)
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
    """The command line's `assertscope explain` of a log text (a traceback), and its exit
    status (1: no tensor or CUDA error in it)."""
    binary = binary_path()
    if binary is None:
        return (
            "assertscope: the assertscope binary was not found (install the package with pip, "
            "or set ASSERTSCOPE_BIN); the traceback alone:\n" + log
        ), 2
    result = subprocess.run(
        [binary, "explain", "-"],
        input=log,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    if result.returncode not in (0, 1):
        return f"assertscope explain failed: {result.stderr.strip()}", result.returncode
    return result.stdout.rstrip("\n"), result.returncode


def binary_path():
    """ASSERTSCOPE_BIN, else the binary installed beside this Python, else one on PATH."""
    explicit = os.environ.get("ASSERTSCOPE_BIN")
    if explicit:
        return explicit
    beside = os.path.join(sys.prefix, "Scripts" if os.name == "nt" else "bin", "assertscope")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    return shutil.which("assertscope")


def _shell():
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()
