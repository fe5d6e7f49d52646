"""Turning a failed rule into the GuardError the user sees (and the report `run` reads)."""

from .. import _report
from ..errors import build

__all__ = ["failure"]


def failure(check, call, rule, location, note=None):
    """The GuardError for a failed rule at a location (a dict from _frames.location_dict)."""
    finding = check.explain(call, rule)
    error = build(check.op, finding, location, note)
    _report.write(error.diagnosis)
    return error
