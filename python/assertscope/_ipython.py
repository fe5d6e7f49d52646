"""GuardErrors in IPython (Jupyter, Colab, VS Code, the terminal shell): the traceback
without the guard's frames, then the report, in a notebook as text and as HTML of the same
lines. The notebook extension (_notebook) and `assertscope.guard()` run inside IPython both
register it: IPython prints a cell's exception itself, never through sys.excepthook.
"""

import html
import re
import sys

from . import _hide
from .errors import GuardError

__all__ = ["show_guard_errors", "rich", "display_report", "report_html"]


def show_guard_errors(ipython):
    """Draws every GuardError of this shell as its report (also when the guard was switched
    on with `assertscope.guard()` rather than the extension)."""
    ipython.set_custom_exc((GuardError,), _show_guard_error)


def rich(ipython):
    """Whether the front end draws HTML: every Jupyter kernel (Jupyter, Colab, VS Code)
    is an ipykernel shell; the terminal one is not."""
    return type(ipython).__name__ == "ZMQInteractiveShell"


def _show_guard_error(ipython, etype, value, tb, tb_offset=None):
    """IPython's custom exception handler: the traceback without the guard's frames, then
    the report (in a notebook as text and HTML, below the traceback, whose last line is
    the report's first)."""
    # IPython records these only for the exceptions it shows itself; %assertscope reads them.
    sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb
    tb = _hide.trimmed(value, tb)
    text = str(value)
    below = rich(ipython) and not getattr(value, "reported", False)
    shown = etype(text.splitlines()[0]) if below and text else value
    stb = ipython.InteractiveTB.structured_traceback(etype, shown, tb, tb_offset=tb_offset)
    # The lines go out as the cell's error (so "run all" stops here, as for any exception).
    ipython._showtraceback(etype, value, stb)
    if below:
        display_report(text)
    return stb


def display_report(report):
    """The report as a notebook output: the terminal's text, and HTML of the same lines."""
    from IPython.display import display

    display({"text/plain": report, "text/html": report_html(report)}, raw=True)


# A source line of the report's snippet (`32 |     code`): the user's code, shown as it is.
_SOURCE_LINE = re.compile(r"^\s*\d+ \|")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1(?!`)")


def report_html(report):
    """The report's lines as HTML: the same text in a monospaced block, the title in the
    error's colour, code spans (`...`) as code rather than backticks."""
    lines = report.split("\n")
    out = []
    for i, line in enumerate(lines):
        text = html.escape(line, quote=False)
        if i == 0:
            text = f'<span style="color:#c62828;font-weight:bold">{text}</span>'
        elif not _SOURCE_LINE.match(line):
            text = _CODE_SPAN.sub(lambda m: f"<code>{m.group(2)}</code>", text)
        out.append(text)
    return (
        '<pre class="assertscope-report" style="border-left:4px solid #c62828;padding:6px 10px;'
        'font-family:var(--jp-code-font-family,monospace);font-size:13px;white-space:pre">'
        + "\n".join(out)
        + "</pre>"
    )
