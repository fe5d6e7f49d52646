"""The human rendering of a finding, for the guard's exceptions.

It draws the binary's diagnostic model (src/diagnostic.rs; here the same fields as a dict)
in the binary's layout (src/render/text.rs, which uses annotate-snippets, as rustc does):

    error[target-out-of-range]: cross_entropy: class target out of range
      --> train.py:32:5
       |
    32 |     loss = criterion(model(x), y)
       |     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ in `main`
       |
       = found: 13 of 64 targets outside [0, 5)
       = help: the labels look 1-based: subtract 1

tests/render_parity.rs renders the same models with both and checks they agree. Pure
Python, standard library only: this runs inside the user's process on the error path.
"""

import unicodedata

__all__ = ["diagnostic", "span", "note", "render", "guard_diagnostic", "WIDTH"]

# The width the sections (why, fix) are wrapped to, as in the binary.
WIDTH = 100


def diagnostic(severity, code, message, spans=(), notes=(), help=None, sections=()):
    """A Diagnostic: severity "error" | "warning" | "note", the cause id or rule code, a
    one-line message, spans (primary first), notes, one help line and sections."""
    return {
        "severity": severity,
        "code": code,
        "message": message,
        "spans": list(spans),
        "notes": list(notes),
        "help": help,
        "sections": list(sections),
    }


def span(file, line, source=None, columns=None, label=None, primary=True):
    """A Span: `columns` are 1-based character columns [start, end) within `source`."""
    return {
        "file": file,
        "line": line,
        "source": source,
        "columns": list(columns) if columns is not None else None,
        "label": label,
        "primary": primary,
    }


def note(kind, text):
    return {"kind": kind, "text": text}


def render(d):
    """The diagnostic as text, ending with a newline."""
    spans = d.get("spans") or []
    drawn = [_source_and_range(s) if s.get("line") is not None else None for s in spans]
    numbers = [str(s["line"]) for s, r in zip(spans, drawn) if r is not None]
    width = max((len(n) for n in numbers), default=0)
    gutter = " " * (width + 1)
    title = d["severity"] + (f"[{d['code']}]" if d.get("code") else "") + f": {d['message']}"
    lines = [title]
    # What the previous element was decides the separators, as annotate-snippets draws them.
    previous = "title"
    shown_snippet = False
    for s, source_range in zip(spans, drawn):
        if source_range is None:
            lines.append(" " * width + "--> " + s["file"] + (f":{s['line']}" if s.get("line") is not None else ""))
            previous = "origin"
            if s.get("label"):
                lines.append(_message(gutter, "note", s["label"]))
                previous = "note"
            continue
        text, start, end = source_range
        column = len(text[:start]) + 1
        arrow = ":::" if shown_snippet else "-->"
        if previous == "snippet":
            lines.append(gutter + "|")
        lines.append(" " * width + f"{arrow} {s['file']}:{s['line']}:{column}")
        lines.append(gutter + "|")
        lines.append(f"{str(s['line']).rjust(width)} | {_expand(text)}".rstrip())
        marker = "^" if s.get("primary", True) else "-"
        pad = _cells(_expand(text[:start]))
        underline = marker * max(1, _cells(_expand(text[start:end])))
        label = f" {s['label']}" if s.get("label") else ""
        lines.append(f"{gutter}| {' ' * pad}{underline}{label}")
        previous = "snippet"
        shown_snippet = True
    messages = [(n["kind"], n["text"]) for n in d.get("notes") or []]
    if d.get("help"):
        messages.append(("help", d["help"]))
    for kind, text in messages:
        if previous in ("title", "snippet"):
            lines.append(gutter + "|")
        lines.append(_message(gutter, kind, text))
        previous = "note"
    out = "\n".join(lines) + "\n"
    sections = d.get("sections") or []
    if sections:
        out += "\n"
        for s in sections:
            name = s["kind"] or "note"
            lead = f"{name}: "
            body = wrap(s["text"], WIDTH - len(s["kind"]) - 2).split("\n")
            out += lead + ("\n" + " " * len(lead)).join(body) + "\n"
    return out


def guard_diagnostic(op, cause, finding, summaries, location, extra_note=None):
    """The model of a guard finding: the op and the cause's title, the user's line, what
    was found, a line per tensor involved, the hint for this case, then the cause's fix."""
    spans = []
    if location is not None:
        function = location.get("function")
        spans.append(
            span(
                location["file"],
                location.get("line"),
                location.get("code"),
                label=f"in `{function}`" if function else None,
            )
        )
    notes = [note("found", finding.found)]
    notes += [note(name, text) for name, text in summaries]
    if extra_note:
        notes.append(note("note", extra_note))
    sections = [note("fix", cause["fix"])]
    return diagnostic("error", finding.cause, f"{op}: {cause['title']}", spans, notes, finding.hint, sections)


def _message(gutter, kind, text):
    lead = f"{gutter}= " + (f"{kind}: " if kind else "")
    return lead + ("\n" + " " * len(lead)).join(text.split("\n"))


def _source_and_range(s):
    """The span's line without trailing blanks, and the [start, end) character range to
    underline; None without source text."""
    source = s.get("source")
    if source is None:
        return None
    lines = source.splitlines()
    text = (lines[0] if lines else "").rstrip()
    columns = s.get("columns")
    if columns is None:
        start = len(text) - len(text.lstrip())
        return text, start, len(text)
    first, last = columns
    start = min(max(first - 1, 0), len(text))
    end = min(max(last, first + 1) - 1, len(text))
    return text, start, max(end, start)


def _expand(text):
    # annotate-snippets draws a tab as four spaces.
    return text.replace("\t", "    ")


def _cells(text):
    """Display width: wide and full-width characters take two terminal cells, combining
    marks none."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def wrap(text, width):
    """Words of `text` in lines of at most `width` characters; paragraphs (separated by a
    blank line) start on a new line."""
    out = []
    for paragraph in (p.strip() for p in text.split("\n\n")):
        if not paragraph:
            continue
        line = ""
        for word in paragraph.split():
            if line and len(line) + 1 + len(word) > width:
                out.append(line)
                line = ""
            line = f"{line} {word}" if line else word
        out.append(line)
    return "\n".join(out)
