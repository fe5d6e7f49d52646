"""GuardError: the exception the guard raises, and the diagnosis it carries."""

import copyreg

from . import _contract, _human, _render, kb

__all__ = ["GuardError", "GuardIndexError", "GuardTypeError", "GuardValueError", "error_class", "Finding", "DIAGNOSIS_SCHEMA"]

DIAGNOSIS_SCHEMA = _contract.DIAGNOSIS_SCHEMA


class Finding:
    """What a failed check saw, in words and numbers. Built only on the error path.

    cause    taxonomy id (kb/causes.toml)
    found    one line: what is wrong and where it sits ("3 of 32 targets outside [0, 10): ...")
    values   numbers for the diagnosis: min, max, bound, bad_count, positions, ...
    tensors  [(name, tensor)] of the tensors involved, summarised one line each
    hint     the specific fix for this case, or None
    """

    __slots__ = ("cause", "found", "values", "tensors", "hint")

    def __init__(self, cause, found, values, tensors, hint=None):
        self.cause = cause
        self.found = found
        self.values = values
        self.tensors = tensors
        self.hint = hint


class GuardError(RuntimeError):
    """A value that would make a CUDA kernel assert, caught before the kernel ran.

    Attributes: cause (taxonomy id), op, location (dict with file, line, function, code, or
    None), values (dict of numbers) and diagnosis (an `assertscope.diagnosis/1` Diagnosis).
    A GuardError re-raised from a DataLoader worker keeps its message but not these.
    `runtime` holds the facts the origin engine reads (the guard report's `runtime` block).
    """

    runtime = None

    def __init__(self, message="", cause=None, op=None, location=None, values=None, diagnosis=None):
        super().__init__(message)
        self.cause = cause
        self.op = op
        self.location = location
        self.values = values if values is not None else {}
        self.diagnosis = diagnosis

    def __reduce__(self):
        # Pickles across processes (multiprocessing, DataLoader workers) with its diagnosis.
        return (
            self.__class__,
            (str(self), self.cause, self.op, self.location, self.values, self.diagnosis),
        )


class _GuardErrorType(type):
    """The type of GuardError's flavours that are also an IndexError, a TypeError or a
    ValueError: each is named GuardError, so a traceback reads `assertscope.GuardError:
    error[...]` as for GuardError itself, and is pickled by its own path
    (`GuardError.IndexError`), which is how a DataLoader worker sends it back."""


copyreg.pickle(_GuardErrorType, lambda cls: cls.pickle_path)


class GuardIndexError(GuardError, IndexError, metaclass=_GuardErrorType):
    """A GuardError where PyTorch raises IndexError for the same input on the CPU, so that
    `except IndexError` in user and library code still catches it."""


class GuardTypeError(GuardError, TypeError, metaclass=_GuardErrorType):
    """A GuardError where PyTorch raises TypeError for the same input."""


class GuardValueError(GuardError, ValueError, metaclass=_GuardErrorType):
    """A GuardError where PyTorch raises ValueError for the same input."""


GuardError.__module__ = "assertscope"
_CLASSES = ((IndexError, GuardIndexError), (TypeError, GuardTypeError), (ValueError, GuardValueError))
for _base, _class in _CLASSES:
    _class.__module__ = "assertscope"
    _class.__name__ = _class.__qualname__ = "GuardError"
    _class.pickle_path = f"GuardError.{_base.__name__}"
    setattr(GuardError, _base.__name__, _class)


def error_class(pytorch_type):
    """The GuardError class that is also an instance of `pytorch_type`, the exception type
    PyTorch raises for the same input (RuntimeError and its subclasses: GuardError itself)."""
    for base, guard_class in _CLASSES:
        if issubclass(pytorch_type, base):
            return guard_class
    return GuardError


def json_safe(value):
    """Values as strict JSON allows: NaN and infinities become strings, tuples lists."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return "nan" if value != value else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def build(op, finding, location, note=None, pytorch_type=RuntimeError, pytorch_message=None):
    """The GuardError for a finding at a location (a dict from _frames.location_dict).

    pytorch_type     the exception type PyTorch raises for this input: the error is one too
    pytorch_message  PyTorch's own message where it refuses the input itself: a `pytorch`
                     line of the report
    """
    from ._summary import describe

    cause = kb.cause(finding.cause)
    summaries = [(name, t if isinstance(t, str) else describe(t)) for name, t in finding.tensors]
    values = json_safe(finding.values)
    evidence = [{"kind": "guard", "text": f"{op}: {finding.found}", "source_line": None}]
    evidence += [{"kind": "tensor", "text": f"{name}: {text}", "source_line": None} for name, text in summaries]
    if pytorch_message:
        # What PyTorch itself said (its CPU kernel refused the call): kept word for word.
        evidence.append({"kind": "pytorch", "text": f"{pytorch_type.__name__}: {pytorch_message}", "source_line": None})
    if note:
        evidence.append({"kind": "note", "text": note, "source_line": None})
    diagnosis = {
        "cause": finding.cause,
        "title": _contract.title_with_op(cause["title"], op),
        "confidence": "high",
        "op": op,
        "location": location,
        "rank": _contract.rank(),
        "evidence": evidence,
        "values": values,
        "explanation": kb.explanation(cause, values, sources=not finding.hint),
        # The specific fix replaces the cause's general one: one piece of advice.
        "fix": f"{finding.hint[:1].upper()}{finding.hint[1:]}" if finding.hint else " ".join(cause["fix"].split()),
        # Steps 1 and 2 (a readable error with the offending value; the values checked
        # against their range) are what the guard just did; later steps still apply.
        "checklist_step": cause.get("checklist_step") if cause.get("checklist_step", 0) > 2 else None,
    }
    error = error_class(pytorch_type)("", finding.cause, op, location, finding.values, diagnosis)
    error.pytorch_message = pytorch_message
    error.reported = False
    render_message(error)
    return error


def full_report(error):
    """The whole report of a GuardError, also when its message is the line that points to
    `assertscope run`'s (the message alone for one re-raised from a DataLoader worker)."""
    if error.diagnosis is None:
        return str(error)
    return _render.render(_human.model(error.diagnosis)).rstrip("\n")


def render_message(error):
    """Draws the error's message from its diagnosis (after anything was added to it): the
    whole report, or, when `assertscope run` has the report to show when the command ends
    (`error.reported`), its first line and where the report is."""
    error.model = _human.model(error.diagnosis)
    if getattr(error, "reported", False):
        message = f"{_contract.headline(error.cause, error.diagnosis['title'])} {_contract.REPORTED_BY_RUN}"
    else:
        message = _render.render(error.model).rstrip("\n")
    error.args = (message,)


def report(error):
    """Writes the error's guard report when `assertscope run` collects them, then draws its
    message: under `run` the command's end shows the report, and the message says so in
    one line; elsewhere (a notebook, `assertscope.guard()`) the message is the report."""
    from . import _report

    error.reported = _report.write(error.diagnosis, runtime=getattr(error, "runtime", None)) is not None and _report.under_run()
    render_message(error)
    return error
