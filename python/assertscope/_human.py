"""A diagnosis (`assertscope.diagnosis/1`) as the diagnostic model a person reads, built as
the binary builds it (src/render/human.rs): the user's line and where the value came from
as spans, the evidence as notes, then why, the fix, the checklist step and where to read
more. One layout for the GuardError, `run`'s report and `explain`: tests/render_parity.rs
draws the same diagnoses with both and compares the texts.

Pure Python, standard library only: it runs inside the user's process on the error path.
"""

import json
import re

from . import _frames, _render, kb
from ._contract import readable_number as number

__all__ = ["model", "values_text", "names"]

# Values the evidence states already: the assertion's message and thread count, the line
# of a metric.
_HIDDEN_VALUES = ("assert_message", "metric_line", "failing_threads")


def model(d):
    """The diagnostic model of one diagnosis (a dict of the JSON contract)."""
    cause = d["cause"]
    severity = "warning" if cause in ("cascade", "distributed-peer-failure") else "error"
    evidence = d.get("evidence") or []
    surfaced = any(e["kind"] == "surfaced" for e in evidence)
    spans = []
    location = d.get("location")
    if location:
        what = "the error surfaced here, not where it happened" if surfaced else None
        spans.append(_location_span(location, what))
    op = d.get("op")
    notes = []
    found = False
    for e in evidence:
        kind, text = e["kind"], e["text"]
        if kind == "surfaced":
            continue
        if kind == "guard":
            # The op is in the title: the finding alone.
            found = True
            notes.append(_render.note("found", text[len(op) + 2 :] if op and text.startswith(f"{op}: ") else text))
        elif kind == "tensor" and ": " in text:
            name, _, summary = text.partition(": ")
            notes.append(_render.note(name, summary))
        else:
            line = e.get("source_line")
            notes.append(_render.note(kind, text if line is None else f"{text} (log line {line})"))
    if op and not names(d.get("title") or "", op):
        notes.append(_render.note("op", op))
    if d.get("rank") is not None:
        notes.append(_render.note("rank", str(d["rank"])))
    values = values_text(d.get("values") or {})
    if values and not found:
        # A guard's finding and tensor lines already say every value, rounded for reading.
        notes.append(_render.note("values", values))
    for o in d.get("origin") or []:
        spans.append(_origin_span(o))
    sections = [_render.note("why", d.get("explanation") or ""), _render.note("fix", d.get("fix") or "")]
    step = d.get("checklist_step")
    if step:
        sections.append(_render.note(f"checklist step {step}", _step_text(step)))
    sections.append(_render.note("more", f"assertscope rules {cause}"))
    return _render.diagnostic(severity, cause, d.get("title") or cause, spans, notes, None, sections)


def names(title, op):
    """Whether the title names the op as a word of its own."""
    return op in re.split(r"[^A-Za-z0-9_.]+", title)


def _location_span(location, what):
    function = location.get("function")
    if function and what:
        label = f"in `{function}`: {what}"
    elif function:
        label = f"in `{function}`"
    else:
        label = what
    return _render.span(location["file"], location.get("line"), _source(location), label=label)


def _origin_span(o):
    label = o.get("note")
    if not label:
        role = o.get("role")
        label = {"data": "the bad value was made here", "call": "the op that asserted ran here"}.get(
            role, f"{role} defined here"
        )
    return _render.span(o["file"], o.get("line"), _source(o), label=label, primary=False)


def _source(location):
    """The line as it is in the file now (with its indentation, so that the column is
    true), the location's own copy otherwise."""
    line = location.get("line")
    text = _frames.source_line(location["file"], line) if line else None
    return text if text is not None else location.get("code")


def _step_text(step):
    for entry in kb.load("causes").get("step", []):
        if entry["number"] == step:
            return entry["text"]
    return ""


def values_text(values):
    """`key=value, ...` of the values worth showing, numbers rounded for reading."""
    shown = []
    for key in sorted(values):
        if key in _HIDDEN_VALUES:
            continue
        value = values[key]
        shown.append(f"{key}={value if isinstance(value, str) else _compact(value)}")
    return ", ".join(shown)


def _compact(value):
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return number(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_compact(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k))}:{_compact(v)}" for k, v in sorted(value.items())) + "}"
    return json.dumps(value, ensure_ascii=False)
