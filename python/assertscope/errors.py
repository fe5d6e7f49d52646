"""GuardError: the exception the guard raises, and the diagnosis it carries."""

from . import _contract, _render, kb

__all__ = ["GuardError", "GuardIndexError", "GuardTypeError", "GuardValueError", "error_class", "Finding", "DIAGNOSIS_SCHEMA"]

DIAGNOSIS_SCHEMA = "assertscope.diagnosis/1"


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


class GuardIndexError(GuardError, IndexError):
    """A GuardError where PyTorch raises IndexError for the same input on the CPU, so that
    `except IndexError` in user and library code still catches it."""


class GuardTypeError(GuardError, TypeError):
    """A GuardError where PyTorch raises TypeError for the same input."""


class GuardValueError(GuardError, ValueError):
    """A GuardError where PyTorch raises ValueError for the same input."""


GuardError.__module__ = "assertscope"
# Reached and shown as assertscope.GuardError.IndexError & co. (a traceback reads
# "assertscope.GuardError.IndexError: embedding: ..."); named GuardError, as a DataLoader
# worker's "Caught GuardError in DataLoader worker process" says; pickled by that path.
for _base, _class in ((IndexError, GuardIndexError), (TypeError, GuardTypeError), (ValueError, GuardValueError)):
    _class.__module__ = "assertscope"
    _class.__name__ = "GuardError"
    _class.__qualname__ = f"GuardError.{_base.__name__}"
    setattr(GuardError, _base.__name__, _class)

_CLASSES = ((IndexError, GuardIndexError), (TypeError, GuardTypeError), (ValueError, GuardValueError))


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
    pytorch_message  PyTorch's own message where it refuses the input itself: it goes first
    """
    from ._summary import describe

    cause = kb.cause(finding.cause)
    summaries = [(name, t if isinstance(t, str) else describe(t)) for name, t in finding.tensors]
    model = _render.guard_diagnostic(op, cause, finding, summaries, location, note)

    fix = " ".join(cause["fix"].split())
    diagnosis = {
        "cause": finding.cause,
        "title": cause["title"],
        "confidence": "high",
        "op": op,
        "location": location,
        "rank": _contract.rank(),
        "evidence": [{"kind": "guard", "text": f"{op}: {finding.found}", "source_line": None}]
        + [{"kind": "tensor", "text": f"{name}: {text}", "source_line": None} for name, text in summaries],
        "values": json_safe(finding.values),
        "explanation": " ".join(cause["explanation"].split()),
        "fix": f"{finding.hint[:1].upper()}{finding.hint[1:]} {fix}" if finding.hint else fix,
        "checklist_step": cause.get("checklist_step") or None,
    }
    error = error_class(pytorch_type)("", finding.cause, op, location, finding.values, diagnosis)
    error.model, error.pytorch_message = model, pytorch_message
    render_message(error)
    return error


def render_message(error):
    """Draws the error's message from its model (after anything was added to the model):
    PyTorch's own message first where it refused the input itself, then the finding."""
    message = _render.render(error.model).rstrip("\n")
    if error.pytorch_message:
        message = f"{error.pytorch_message}\n\n{message}"
    error.args = (message,)
