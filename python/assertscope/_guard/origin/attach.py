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

from ... import _contract
from ...errors import json_safe
from . import engine, runtime

# The evidence kind of the origin's notes, as the binary writes them (src/origin/mod.rs).
ORIGIN_NOTE = "origin"


def explain(error, check, call, rule, finding, location, start=None):
    """Adds the facts and the path of one failure to its GuardError; returns the error."""
    from .._state import Busy

    with Busy():
        facts = runtime.gather(check, call, rule, finding, location, start or sys._getframe(1))
    return with_facts(error, facts)


def with_gathered(error, gather):
    """Adds the facts `gather(facts)` records (a check's own: its module, its batch) to a
    GuardError, as `explain` does for the op checks; a failure to gather is a note, never
    the user's error. Returns the error."""
    from .._state import Busy

    facts = runtime.Facts()
    try:
        with Busy():
            gather(facts)
            runtime.finish(facts)
    except Exception as failure:  # noqa: BLE001 - the facts are extra
        runtime.failed(facts, failure)
    return with_facts(error, facts)


def with_facts(error, facts):
    """Adds gathered Facts (and, outside `run`, the engine's path) to a GuardError's
    diagnosis; its message is drawn from the diagnosis when it is raised (errors.report)."""
    error.runtime = json_safe(facts.runtime)
    error.values.update(facts.values)
    diagnosis = error.diagnosis
    if diagnosis is None:
        return error
    diagnosis["values"].update(json_safe(facts.values))
    if facts.hints:
        diagnosis["fix"] = " ".join(h[:1].upper() + h[1:] + "." for h in facts.hints) + " " + diagnosis["fix"]
    diagnosis.setdefault("origin", [])
    notes = list(facts.notes)
    if not os.environ.get(_contract.REPORT_DIR_ENV):
        from ... import _report

        traced, note = engine.trace(_report.report(diagnosis, error.runtime))
        if traced is not None:
            take_path(diagnosis, traced)
        elif note:
            notes.append(note)
    diagnosis["evidence"] += [{"kind": ORIGIN_NOTE, "text": text, "source_line": None} for text in notes]
    return error


def take_path(diagnosis, traced):
    """Takes the engine's answer into the diagnosis: the proved steps, where the trail ends,
    the dataset's indices and sample, and the engine's notes."""
    steps = [step for step in traced.get("origin") or [] if isinstance(step, dict) and step.get("file")]
    diagnosis["origin"] = steps
    end = traced.get("origin_end")
    diagnosis["origin_end"] = end if isinstance(end, dict) else None
    if traced.get("dataset_indices") is not None:
        diagnosis["dataset_indices"] = traced["dataset_indices"]
    values = traced.get("values") or {}
    for key in ("dataset_indices", "dataset_sample"):
        if key in values:
            diagnosis["values"][key] = values[key]
    known = {e.get("text") for e in diagnosis["evidence"]}
    diagnosis["evidence"] += [
        e for e in traced.get("evidence") or [] if isinstance(e, dict) and e.get("kind") == ORIGIN_NOTE and e.get("text") not in known
    ]
