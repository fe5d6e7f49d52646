"""Keeping assertscope's own code out of what the user reads: its frames out of the
tracebacks of exceptions that passed through its wrappers (as pytest hides its own), and
its wrappers out of the location of warnings raised in the code they call.

CPython honours no `__tracebackhide__`: a frame an exception passed through stays in its
traceback. So the traceback is trimmed for real (each `tb_next` that leads into a frame of
this package is linked past it) before the interpreter prints an uncaught exception
(`sys.excepthook`, `threading.excepthook`) and when a caught GuardError is formatted
(`traceback.TracebackException`, which `format_exc`, `logging` and Ray's report of a worker's
error go through); in IPython, which prints a cell's exception
itself, _ipython's handler trims it and draws the report. An exception raised inside this package that is not a GuardError is a bug of ours and
keeps every frame.

A warning's location is fixed before any Python code sees it: a wrapper of ours between
PyTorch's `warn(..., stacklevel=2)` (or a C++ `TORCH_WARN`, which names the innermost Python
frame) and the caller gets named instead of the caller. When a warning names a frame of
this package, it is shown at the first frame outside it below that one: where it would
have been without the wrapper.

Installed by `guard()` and `on_cpu()` and left in place: a GuardError raised inside
`with guard():` is printed after the block switched the guard off.
"""

import os
import sys
import threading
import warnings

__all__ = ["install", "trim", "trimmed"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_ours = {}
_installed = []


def ours(filename):
    """Whether a code object's file is part of this package (cached by name)."""
    known = _ours.get(filename)
    if known is None:
        known = _ours[filename] = os.path.abspath(filename).startswith(_PACKAGE)
    return known


def _frame_is_ours(tb):
    return ours(tb.tb_frame.f_code.co_filename)


def trim(tb):
    """`tb` without the entries of this package's frames; unchanged when every entry is one."""
    head = tb
    while head is not None and _frame_is_ours(head):
        head = head.tb_next
    if head is None:
        return tb
    node = head
    while node.tb_next is not None:
        if _frame_is_ours(node.tb_next):
            node.tb_next = node.tb_next.tb_next
        else:
            node = node.tb_next
    return head


def trimmed(error, tb=None):
    """The traceback of `error` (`tb` when given) trimmed, and those of the exceptions it
    is chained to: each that is a GuardError or arose outside this package."""
    from .errors import GuardError

    result = tb if tb is not None else error.__traceback__
    seen = set()
    current, own = error, result
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if own is not None and (isinstance(current, GuardError) or not _frame_is_ours(_innermost(own))):
            own = trim(own)
            current.__traceback__ = own
            if current is error:
                result = own
        current = current.__cause__ or current.__context__
        own = current.__traceback__ if current is not None else None
    return result


def _innermost(tb):
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb


def _hiding_excepthook(hook):
    def excepthook(etype, value, tb):
        if value is not None:
            try:
                tb = trimmed(value, tb)
            except Exception:  # noqa: BLE001 - the user's error matters more than our trimming
                pass
        return hook(etype, value, tb)

    excepthook.__wrapped__ = hook
    return excepthook


def _hiding_thread_excepthook(hook):
    def excepthook(args):
        if args.exc_value is not None:
            try:
                trimmed(args.exc_value, args.exc_traceback)  # in place: the head is the thread's own
            except Exception:  # noqa: BLE001
                pass
        return hook(args)

    excepthook.__wrapped__ = hook
    return excepthook


def _outside_wrappers(show):
    def _showwarnmsg(message):
        try:
            if ours(message.filename):
                frame = _caller_of_ours(message.filename, message.lineno)
                if frame is not None:
                    message.filename, message.lineno, message.line = frame.f_code.co_filename, frame.f_lineno, None
        except Exception:  # noqa: BLE001 - a warning is shown whatever happens here
            pass
        return show(message)

    _showwarnmsg.__wrapped__ = show
    return _showwarnmsg


def _caller_of_ours(filename, lineno):
    """The first frame outside this package below the live frame at `filename:lineno`."""
    frame = sys._getframe(2)
    while frame is not None and not (frame.f_code.co_filename == filename and frame.f_lineno == lineno):
        frame = frame.f_back
    while frame is not None and ours(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def _hiding_traceback_exception(init):
    """A GuardError formatted while it is caught (`traceback.format_exc()`, `logging.exception`,
    Ray printing a worker's error and sending it to the driver) is trimmed as well: every
    formatting of the `traceback` module goes through `TracebackException`."""

    def __init__(self, exc_type, exc_value, exc_traceback, *args, **kwargs):
        if exc_value is not None and exc_traceback is not None:
            from .errors import GuardError

            if isinstance(exc_value, GuardError):
                try:
                    exc_traceback = trimmed(exc_value, exc_traceback)
                except Exception:  # noqa: BLE001 - the user's error matters more than our trimming
                    pass
        init(self, exc_type, exc_value, exc_traceback, *args, **kwargs)

    __init__.__wrapped__ = init
    return __init__


def install():
    """Puts the hooks in place once (idempotent)."""
    if _installed:
        return
    _installed.append(True)
    import traceback

    traceback.TracebackException.__init__ = _hiding_traceback_exception(traceback.TracebackException.__init__)
    sys.excepthook = _hiding_excepthook(sys.excepthook)
    threading.excepthook = _hiding_thread_excepthook(threading.excepthook)
    if hasattr(warnings, "_showwarnmsg"):
        warnings._showwarnmsg = _outside_wrappers(warnings._showwarnmsg)


def ipython_shell():
    """The running IPython shell, or None."""
    get = getattr(sys.modules.get("IPython"), "get_ipython", None)
    try:
        return get() if get is not None else None
    except Exception:  # noqa: BLE001 - no shell
        return None
