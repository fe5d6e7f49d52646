"""Turning a failed rule into the GuardError the user sees (and the report `run` reads)."""

from .. import _report
from ..errors import build

__all__ = ["failure"]


def failure(check, call, rule, location, note=None, pytorch_error=None):
    """The GuardError for a failed rule at a location (a dict from _frames.location_dict).

    pytorch_error: the exception PyTorch itself raised for this call, if it refused it: the
    GuardError is of its type and its message goes first.
    """
    finding = check.explain(call, rule)
    if pytorch_error is not None:
        error = build(check.op, finding, location, note, type(pytorch_error), str(pytorch_error))
    else:
        error = build(check.op, finding, location, note, check.pytorch_error)
    from . import origin  # where the bad value or size came from (error path only)

    origin.attach(error, origin.find(check, call, rule, finding, location))
    _report.write(error.diagnosis)
    return error
