"""A guard failure's facts and proved path, added to its GuardError.

What: `explain(error, ...)` gathers the runtime facts (runtime.py), puts the numbers they
give into the diagnosis (`values.dataset_indices`, the batch step) with the hints drawn from
them, keeps the `runtime` block on the error for its guard report, and, when no `run`
collects the report (no report directory), asks the engine for the path (engine.py) and
draws it: each step a secondary span, numbered from the failing argument back, the step that
made the value last, and where the trail ends as a note.
Why: one place turns facts and path into the diagnosis and the message, for every check
(the op checks, the recurrent state, BatchNorm's batch of one).
"""

import os
import sys

from ... import _contract, _frames, _render
from ...errors import json_safe, render_message
from . import engine, runtime


def explain(error, check, call, rule, finding, location, start=None):
    """Adds the facts and the path of one failure to its GuardError; returns the error."""
    from .._state import Busy

    with Busy():
        facts = runtime.gather(check, call, rule, finding, location, start or sys._getframe(1))
    return with_facts(error, facts)


def with_facts(error, facts):
    """Adds gathered Facts (and, outside `run`, the engine's path) to a GuardError."""
    error.runtime = json_safe(facts.runtime)
    diagnosis = error.diagnosis
    if diagnosis is not None:
        diagnosis["values"].update(json_safe(facts.values))
        if facts.hints:
            diagnosis["fix"] = " ".join(h[:1].upper() + h[1:] + "." for h in facts.hints) + " " + diagnosis["fix"]
        diagnosis.setdefault("origin", [])
    error.values.update(facts.values)
    model = error.model
    model["notes"] += [_render.note("help", hint) for hint in facts.hints]
    notes = list(facts.notes)
    if diagnosis is not None and not os.environ.get(_contract.REPORT_DIR_ENV):
        from ... import _report

        traced, note = engine.trace(_report.report(diagnosis, error.runtime))
        if traced is not None:
            notes += path(error, traced)
        elif note:
            notes.append(note)
    if notes:
        if diagnosis is not None:
            diagnosis.setdefault("notes", []).extend(notes)
        model["notes"] += [_render.note("note", text) for text in notes]
    render_message(error)
    return error


def path(error, traced):
    """Takes the engine's path into the diagnosis and the message; returns its notes."""
    diagnosis = error.diagnosis
    steps = [step for step in traced.get("origin") or [] if isinstance(step, dict) and step.get("file")]
    diagnosis["origin"] = steps
    end = traced.get("origin_end")
    diagnosis["origin_end"] = end
    if traced.get("dataset_indices") is not None:
        diagnosis["dataset_indices"] = traced["dataset_indices"]
    for number, step in enumerate(steps, 1):
        label = f"{number}. {step.get('note') or step.get('role') or ''}".rstrip()
        error.model["spans"].append(
            _render.span(_frames.display_path(step["file"]), step.get("line"), step.get("code"), label=label, primary=False)
        )
    notes = [text for text in traced.get("notes") or [] if isinstance(text, str)]
    if isinstance(end, dict) and end.get("note"):
        where = f"{_frames.display_path(end['file'])}:{end.get('line')}" if end.get("file") else None
        notes.append(f"{end['note']} ({where})" if where else end["note"])
    return notes
