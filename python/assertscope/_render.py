"""The human rendering of a finding, for the guard's exceptions.

It draws the binary's diagnostic model (crates/diag/src/model.rs; here the same fields as a dict)
in the binary's layout (crates/diag/src/text.rs, which uses annotate-snippets, as rustc does);
_human.py builds the model of a diagnosis as src/render/human.rs does:

    error[target-out-of-range]: class target out of range in cross_entropy
      --> train.py:32:5
       |
    32 |     loss = criterion(model(x), y)
       |     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ in `main`
       |
       = found: 13 of 64 targets outside [0, 5) (C = 5, ignore_index = -100): 5 at [12],
                5 at [23], ... (11 more)

    fix: The labels look 1-based: ... Subtract 1 from every label (`y - 1`), ...

tests/render_parity.rs renders the same models with both and checks they agree. Pure
Python, standard library only: this runs inside the user's process on the error path.
"""

import unicodedata

__all__ = ["diagnostic", "span", "note", "render", "wrap", "wrap_lines", "words", "WIDTH"]

# The width notes and sections (why, fix) are wrapped to, as in the binary.
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
    pieces = _pieces(spans)
    numbers = [str(line["line"]) for kind, lines in pieces if kind == "snippet" for line in lines]
    width = max((len(n) for n in numbers), default=0)
    gutter = " " * (width + 1)
    title = d["severity"] + (f"[{d['code']}]" if d.get("code") else "") + f": {d['message']}"
    lines = [title]
    # What the previous element was decides the separators, as annotate-snippets draws them.
    previous = "title"
    shown_snippet = False
    for kind, piece in pieces:
        if kind == "header":
            s = piece
            lines.append(" " * width + "--> " + s["file"] + (f":{s['line']}" if s.get("line") is not None else ""))
            previous = "origin"
            if s.get("label"):
                lines.append(_message(gutter, "note", s["label"]))
                previous = "note"
            continue
        head = next((line for line in piece if line["span"].get("primary", True)), piece[0])
        arrow = ":::" if shown_snippet else "-->"
        if previous == "snippet":
            lines.append(gutter + "|")
        column = len(head["text"][: head["start"]]) + 1
        lines.append(" " * width + f"{arrow} {head['span']['file']}:{head['line']}:{column}")
        lines.append(gutter + "|")
        fillers = {line["line"] + 1: _gap_line(line, after, None) or "" for line, after in zip(piece, piece[1:]) if after["line"] - line["line"] == 2}
        trim = _left_trim(piece, fillers.values())
        last = None
        for line in piece:
            if last is not None and line["line"] - last == 2:
                lines.append(_filler_line(last + 1, fillers[last + 1], width, trim))
            elif last is not None and line["line"] - last > 1:
                lines.append("...")
            last = line["line"]
            lines.extend(_snippet_line(line, width, gutter, trim))
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


def _snippet_line(line, width, gutter, trim):
    """The numbered source line and its underline, the first ``trim`` cells of the
    indentation drawn as ``...`` (as annotate-snippets does with deep indentation)."""
    text = _expand(line["text"])
    start = len(_expand(line["text"][: line["start"]]))
    end = len(_expand(line["text"][: line["end"]]))
    if trim:
        text = "..." + text[trim + 3 :]
    shown = f"{str(line['line']).rjust(width)} | {text}".rstrip()
    s = line["span"]
    marker = "^" if s.get("primary", True) else "-"
    pad = _cells(_expand(line["text"])[:start]) - trim
    underline = marker * max(1, _cells(_expand(line["text"])[start:end]))
    label = f" {s['label']}" if s.get("label") else ""
    return [shown, f"{gutter}| {' ' * pad}{underline}{label}"]


def _filler_line(number, text, width, trim):
    """A line between two spans' lines, drawn without an underline."""
    text = _expand(text)
    if trim:
        text = "..." + text[trim + 3 :]
    return f"{str(number).rjust(width)} | {text}".rstrip()


def _left_trim(lines, fillers=()):
    """The cells of indentation annotate-snippets leaves out of a snippet: only when every
    line (and span) starts more than 26 cells in."""
    texts = [line["text"] for line in lines] + list(fillers)
    indent = min((_indent_cells(text) for text in texts if text.strip()), default=0)
    span_left = min(_cells(_expand(line["text"][: line["start"]])) for line in lines)
    whitespace_left = max(min(indent, span_left) - 6, 0)
    return whitespace_left - 16 if whitespace_left > 20 else 0


def _indent_cells(text):
    return sum(4 if ch == "\t" else 1 for ch in text[: len(text) - len(text.lstrip())])


# annotate-snippets fits source lines into 140 cells, gutter included; a longer line is
# cut to KEPT cells around its span (crates/diag/src/text.rs cuts alike).
TERM_WIDTH = 140
KEPT = 90
# Text cut on the left becomes blanks (the column stays true), drawn as `...` once this deep.
DEEP_INDENT = 27


def _pieces(spans):
    """("snippet", lines) for spans with source (those of one file on different lines
    merged in line order, unless a gap of exactly one line cannot be read), and
    ("header", span) for spans without."""
    digits = max((len(str(s["line"])) for s in spans if s.get("source") is not None and s.get("line") is not None), default=0)
    fits = TERM_WIDTH - 3 - digits
    pieces = []
    for s in spans:
        line = _source_line(s, fits) if s.get("line") is not None else None
        if line is None:
            pieces.append(("header", s))
            continue
        for kind, lines in pieces:
            if kind == "snippet" and _joins(lines, line, fits):
                at = sum(1 for other in lines if other["line"] < line["line"])
                lines.insert(at, line)
                break
        else:
            pieces.append(("snippet", [line]))
    return pieces


def _joins(lines, line, fits):
    if line["cut"] or lines[0]["span"]["file"] != line["span"]["file"]:
        return False
    if any(other["cut"] or other["line"] == line["line"] for other in lines):
        return False
    before = max((other for other in lines if other["line"] < line["line"]), key=lambda o: o["line"], default=None)
    after = min((other for other in lines if other["line"] > line["line"]), key=lambda o: o["line"], default=None)
    # A gap of one line is drawn as that line: it joins only when the file can give it.
    if before and line["line"] - before["line"] == 2 and _gap_line(before, line, fits) is None:
        return False
    return not (after and after["line"] - line["line"] == 2 and _gap_line(line, after, fits) is None)


def _gap_line(before, after, fits):
    """The line between two spans' lines one apart, read from their file: only when the
    file still holds both spans' lines as shown and the line fits uncut (as text.rs)."""
    from assertscope import _frames

    def read(number):
        text = _frames.source_line(before["span"]["file"], number)
        return None if text is None else text.rstrip()

    if read(before["line"]) != before["text"] or read(after["line"]) != after["text"]:
        return None
    text = read(before["line"] + 1)
    if text is None or (fits is not None and _cut_long_line(text, 0, 0, fits)[3]):
        return None
    return text


def _source_line(s, fits):
    """The span's line without trailing blanks, cut to fit, and the [start, end)
    character range to underline; None without source text."""
    source = s.get("source")
    if source is None:
        return None
    lines = source.splitlines()
    text = (lines[0] if lines else "").rstrip()
    columns = s.get("columns")
    if columns is None:
        start, end = len(text) - len(text.lstrip()), len(text)
    else:
        first, last = columns
        start = min(max(first - 1, 0), len(text))
        end = max(min(max(last, first + 1) - 1, len(text)), start)
    text, start, end, cut = _cut_long_line(text, start, end, fits)
    return {"span": s, "line": s["line"], "text": text, "start": start, "end": end, "cut": cut}


def _cut_long_line(text, start, end, fits):
    """A line wider than ``fits`` cells, cut to KEPT cells around the span: what is left
    out on the left becomes blanks (one per character), on the right ``...``."""
    cells = [4 if ch == "\t" else _cells(ch) for ch in text]
    if sum(cells) <= fits:
        return text, start, end, False
    span_cells = sum(cells[start:end])
    if span_cells >= KEPT:
        left = start
    else:
        target = max(sum(cells[:start]) - (KEPT - span_cells) // 2, 0)
        left, seen = 0, 0
        for c in cells:
            if seen + c > target:
                break
            seen += c
            left += 1
    if left < DEEP_INDENT:
        left = 0
    right, kept = left, 0
    while right < len(text) and kept + cells[right] <= KEPT:
        kept += cells[right]
        right += 1
    out = " " * left + text[left:right] + ("..." if right < len(text) else "")
    start, end = max(start, left), min(max(end, left), right)
    return out, start, max(end, start), True


def _message(gutter, kind, text):
    """`= kind: text`, wrapped to the page width under its first word (as the sections are)."""
    lead = f"{gutter}= " + (f"{kind}: " if kind else "")
    return lead + ("\n" + " " * len(lead)).join(wrap_lines(text, max(WIDTH - len(lead), 20)))


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
    """Words of `text` in lines of at most `width` characters (a longer word alone on its
    line); paragraphs (separated by a blank line) start on a new line. A code span
    (`...`) or a bracketed group ([0, 5)) is one word: it is never split."""
    out = []
    for paragraph in (p.strip() for p in text.split("\n\n")):
        if paragraph:
            out.extend(_fill(paragraph, width))
    return "\n".join(out)


def wrap_lines(text, width):
    """Each line of `text` wrapped on its own (a line break in the text stays one)."""
    return [line for part in text.split("\n") for line in (_fill(part, width) or [""])]


def _fill(paragraph, width):
    lines, line = [], ""
    for word in words(paragraph):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = ""
        line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines


def words(text):
    """`text` split at blanks, outside code spans and square brackets; blanks inside them
    become one space each. A backtick or bracket that is never closed is a plain character."""
    out, word, i = [], "", 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            if word:
                out.append(word)
                word = ""
            i += 1
            continue
        end = _group_end(text, i)
        if end is None:
            word += ch
            i += 1
        else:
            word += " ".join(text[i:end].split())
            i = end
    if word:
        out.append(word)
    return out


def _group_end(text, i):
    """The end of the code span or bracketed group opening at `i`, or None."""
    if text[i] == "`":
        run = len(text) - i - len(text[i:].lstrip("`"))
        fence = "`" * run
        at = i + run
        while True:
            at = text.find(fence, at)
            if at < 0:
                return None
            after = at + run
            if after >= len(text) or text[after] != "`":
                return after
            at = after + len(text[after:]) - len(text[after:].lstrip("`"))
    if text[i] == "[":
        depth = 0
        for j in range(i, len(text)):
            depth += {"[": 1, "]": -1}.get(text[j], 0)
            if depth == 0:
                return j + 1
    return None
