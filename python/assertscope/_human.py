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

# Values shown elsewhere: the assertion's message and thread count and the line of a metric
# are in the evidence, the dataset's indices and sample in the `dataset` note.
_HIDDEN_VALUES = ("assert_message", "metric_line", "failing_threads", "dataset_indices", "dataset_sample")
# Dataset indices listed before "… (N in all)".
_SHOWN_INDICES = 8


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
    rank = d.get("rank")
    # A `node` line ("rank 1 ran on node ...") names the rank already.
    if rank is not None and not any(e["kind"] == "node" and e["text"].startswith(f"rank {rank} ") for e in evidence):
        notes.append(_render.note("rank", str(d["rank"])))
    values = values_text(d.get("values") or {})
    if values and not found:
        # A guard's finding and tensor lines already say every value, rounded for reading.
        notes.append(_render.note("values", values))
    samples = _dataset_note(d)
    if samples:
        notes.append(_render.note("dataset", samples))
    spans += _origin_spans(d)
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


def _origin_spans(d):
    """Where the bad value came from: secondary spans numbered along the path from the
    refused value back to the line that made it (a size trail beside a value trail numbered
    on its own, "size 1."), then where the trail ends. Steps on one line share one label
    ("2. and size 2. made here: ..."), so that the line is drawn once."""
    origin = [o for o in d.get("origin") or [] if isinstance(o, dict) and o.get("file")]
    chains = [o["chain"] for o in origin if o.get("chain")]
    mixed = any(c != chains[0] for c in chains)
    numbers = {}
    number = 0
    steps = []  # [where, the step's number or numbers, what it says]

    def add(at, prefix, body):
        # A notebook cell is named as everywhere else in the report (`Cell In[7]`).
        at = dict(at, file=_frames.display_path(at["file"]))
        for step in steps:
            if step[0]["file"] == at["file"] and step[0].get("line") == at.get("line"):
                if step[2] == body and step[1]:
                    step[1] = f"{step[1]}. and {prefix}"
                else:
                    step[2] = f"{_numbered(step[1], step[2])}; {_numbered(prefix, body)}"
                    step[1] = ""
                return
        steps.append([at, prefix, body])

    for o in origin:
        chain, note = o.get("chain"), o.get("note")
        if chain:
            numbers[chain] = numbers.get(chain, 0) + 1
            n = numbers[chain]
            if chain == chains[0]:
                number = n
            prefix = f"{chain} {n}" if mixed and chain != chains[0] else str(n)
            body = f"made here: {note or ''}" if o.get("role") == "made" else (note or "")
        elif note:
            prefix, body = "", note
        else:
            role = o.get("role")
            prefix = ""
            body = {"data": "the bad value was made here", "call": "the op that asserted ran here"}.get(
                role, f"{role} defined here"
            )
        add(o, prefix, body)
    end = d.get("origin_end")
    # A trail that ends on the user's own line before any step ("`ids` is not bound in this
    # file") draws that line a second time and says nothing of where the value came from.
    start = d.get("location") or {}
    at_the_start = (
        isinstance(end, dict)
        and not origin
        and _frames.display_path(end.get("file") or "") == start.get("file")
        and end.get("line") == start.get("line")
    )
    if isinstance(end, dict) and end.get("file") and not at_the_start:
        add(end, str(number + 1), end.get("note") or "")
    return [
        _render.span(at["file"], at.get("line"), _source(at), label=_numbered(prefix, body), primary=False)
        for at, prefix, body in steps
    ]


def _numbered(prefix, body):
    return f"{prefix}. {body}" if prefix else body


def _dataset_note(d):
    """The dataset indices of the bad samples, with what one of them holds."""
    indices = d.get("dataset_indices")
    if indices is None:
        indices = [i for i in (d.get("values") or {}).get("dataset_indices") or [] if isinstance(i, int)]
    if not indices:
        return None
    shown = [str(i) for i in indices[:_SHOWN_INDICES]]
    if len(indices) > _SHOWN_INDICES:
        shown.append(f"… ({len(indices)} in all)")
    what = "the bad sample is index" if len(indices) == 1 else "the bad samples are indices"
    sample = (d.get("values") or {}).get("dataset_sample")
    sample = f"; index {indices[0]}: {sample}" if isinstance(sample, str) else ""
    return f"{what} {', '.join(shown)} of the DataLoader's dataset{sample}"


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
