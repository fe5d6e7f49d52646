"""From the op to the origin: on a guard failure, the lines that made the bad value or the
size it broke, as `origin` locations (role "data" or "module") beside the crash location.

Everything here runs on the error path only, after a check failed. Clean runs pay for two
cheap recorders: module construction sites (modules.py) and the dataset indices of each
DataLoader batch (loader.py).
"""

import sys

from ... import _frames
from . import flow, loader, modules, samples

__all__ = ["install", "uninstall", "find", "attach"]

MAX_ORIGINS = 4


def install():
    modules.install()
    loader.install()
    from . import batchnorm, rnn

    rnn.install()
    batchnorm.install()


def uninstall():
    from . import batchnorm, rnn

    batchnorm.uninstall()
    rnn.uninstall()
    loader.uninstall()
    modules.uninstall()


def _location(filename, line, function, role, note):
    where = _frames.location_dict((filename, line, function))
    where["role"] = role
    where["note"] = note
    return where


def _live_frames(location):
    """The live user frames when the failure is raised at the failing call (sync mode)."""
    if not location:
        return []
    frames = list(flow.user_frames(sys._getframe(1)))
    if frames and _frames.display_path(frames[0].f_code.co_filename) == location.get("file") and frames[0].f_lineno == location.get("line"):
        return frames
    return []


class Origins:
    """The origin locations found for one failure, and what they add to its values and hint."""

    def __init__(self):
        self.locations = []
        self.values = {}
        self.hints = []

    def add(self, filename, line, function, role, note):
        if any(o["file"] == _frames.display_path(filename) and o["line"] == line for o in self.locations):
            return
        if len(self.locations) < MAX_ORIGINS:
            self.locations.append(_location(filename, line, function, role, note))

    def add_module(self, module):
        """The line that built `module` (a recorded layer or loss), with what it was built with."""
        sites = modules.sites(module) if module is not None else ()
        if sites:
            filename, line, function = sites[0]
            self.add(filename, line, function, "module", f"{modules.created_with(module)} created here")


def report(error, origins):
    """Attaches the origins to an error a recorder raised itself and writes its report."""
    from ...errors import report as write_report

    attach(error, origins)
    return write_report(error)


def _what(finding):
    values = finding.values or {}
    bad = values.get("distinct_bad_values") or values.get("bad_values") or []
    return [v for v in bad if isinstance(v, (int, float)) and not isinstance(v, bool)]


def _predicate(finding, subject):
    """What a sample holding the offending value looks like, for the re-read."""
    cause = finding.cause
    if cause == "target-shape" and subject.dim() >= 2:
        per_sample = tuple(subject.shape[1:])

        def shaped(value):
            shape = tuple(getattr(value, "shape", ()) or ())
            return hasattr(value, "dtype") and shape == per_sample

        return shaped
    if cause == "target-dtype":
        per_sample = tuple(subject.shape[1:])

        def floating(value):
            if isinstance(value, float):
                return not per_sample
            return getattr(value, "is_floating_point", lambda: False)() and tuple(value.shape) == per_sample

        return floating
    wanted = set(_what(finding))
    if not wanted:
        return None
    return lambda value: samples.matches_value(value, wanted)


def _module_origin(origins, found, need):
    """Adds a module's construction sites; `found` is (description, sites)."""
    if not found:
        return
    description, sites = found
    note = f"{description} created here" + (f": {need}" if need else "")
    for k, (filename, line, function) in enumerate(sites):
        origins.add(filename, line, function, "module", note if k == 0 else f"{description} built from here")
    if sites:
        filename, line, _ = sites[0]
        for source, made, name in flow.size_origin(filename, line):
            origins.add(source, made, None, "module", f"`{name}`, the size given to {description}, set here")
        if len(sites) > 1:
            filename, line, _ = sites[1]
            for source, made, name in flow.size_origin(filename, line):
                origins.add(source, made, None, "module", f"`{name}`, the size given to the model, set here")


def _class_head(input, classes):
    """The layer that made the logits: through the autograd graph, else the one recorded
    layer of that output size."""
    kinds = ("Linear", "LazyLinear", "Bilinear", "Conv1d", "Conv2d", "Conv3d")
    found = modules.producer_of(input, kinds)
    if found is not None:
        return found
    sized = [
        (modules.created_with(m), s)
        for m, s in modules.recorded(kinds)
        if getattr(m, "out_features", getattr(m, "out_channels", None)) == classes
    ]
    return sized[-1] if sized else None


def _data_origin(origins, finding, subject, frames):
    traced = flow.trace_value(frames, subject) if frames else None
    name_line = None
    if traced is not None and traced[1] == "assign":
        filename, line, function = traced[0]
        origins.add(filename, line, function, "data", "the offending values were made here")
        name_line = traced[0]
    if traced is not None and traced[1] != "for":
        return name_line
    positions = (finding.values or {}).get("positions") or []
    predicate = _predicate(finding, subject)
    if predicate is None:
        return name_line
    if not positions and subject.dim() >= 1:
        positions = [[0]]
    from .._state import Busy

    found = samples.find(subject, positions, predicate, loader.recent(), Busy)
    if found is None:
        return name_line
    record = found["record"]
    every_sample = finding.cause in ("target-dtype", "target-shape")  # not a few bad samples
    if not every_sample:
        origins.values["dataset_indices"] = found["indices"]
    origins.values["batch_step"] = record.step
    if record.steps:
        origins.values["batches_in_epoch"] = record.steps
    hit = found["hit"]
    where = "the dataset's samples" if found["by"] == "dataset" else "the collate_fn"
    first = found["indices"][0]
    if hit is not None:
        filename, line, function, element = hit
        what = "the value was made here" if every_sample else f"dataset index {first}: the value was made here"
        origins.add(filename, line, function, "data", f"{what}, in {where}")
        for filled in flow.attribute_sources(filename, line, element):
            origins.add(filename, filled, None, "data", "the table that value was read from was filled here")
    if record.step >= 5 and not every_sample:
        origins.hints.append(
            f"the first bad value came at step {record.step}"
            + (f" of {record.steps}" if record.steps else "")
            + f" (dataset index {first}) after {record.step - 1} clean batches: a rare class or a late cohort of the "
            "data, not an offset of every label"
        )
    return name_line


def find(check, call, rule, finding, location):
    """The origins of one failure (an Origins), never raising."""
    origins = Origins()
    try:
        _find(check, call, rule, finding, location, origins)
    except Exception:  # noqa: BLE001 - the origin is extra: never hide the real error behind ours
        pass
    return origins


def _find(check, call, rule, finding, location, origins):
    frames = _live_frames(location)
    subject = rule.tensor
    cause = finding.cause
    values = finding.values or {}
    hint = (finding.hint or "").lower()
    op = check.op
    if op in ("cross_entropy", "nll_loss", "multi_margin_loss", "multilabel_margin_loss") and cause in (
        "target-out-of-range",
        "target-shape",
        "target-dtype",
        "batch-size-mismatch",
    ):
        input = call.get("input")
        classes = values.get("classes")
        bad = _what(finding)
        padding = bool(bad) and all(v < 0 or v == 255 for v in bad)
        head_too_small = cause == "target-out-of-range" and classes is not None and not padding and "1-based" not in hint
        if head_too_small:  # the size is the likelier mistake: its line first
            need = f"{classes} outputs, the labels need {values['max'] + 1}" if values.get("max") is not None else None
            _module_origin(origins, _class_head(input, classes), need)
        if cause != "batch-size-mismatch":  # there the target is usually right, the input is not
            _data_origin(origins, finding, subject, frames)
        if padding:
            loss = [(m, s) for m, s in modules.recorded(("CrossEntropyLoss", "NLLLoss")) if s]
            if loss:
                module, sites = loss[-1]
                filename, line, function = sites[0]
                origins.add(
                    filename, line, function, "module",
                    f"{modules.created_with(module)} created here: entries equal to ignore_index are skipped",
                )
        elif cause == "batch-size-mismatch":
            head = _class_head(input, input.shape[-1] if input.dim() == 2 else input.shape[1])
            for filename, line, function in (head[1][:1] if head else ()):
                for reshape in flow.batch_reshapes(filename, line):
                    origins.add(
                        filename, reshape, "forward", "data",
                        f"a reshape with -1 in the batch position: it gave {input.shape[0]} rows for "
                        f"{values.get('target_shape', ['?'])[0]} samples",
                    )
            traced = flow.trace_value(frames, input) if frames else None
            if traced is not None and traced[1] == "assign":
                filename, line, function = traced[0]
                origins.add(filename, line, function, "data", "the input was made here")
    elif op == "embedding" or op == "embedding_bag":
        _data_origin(origins, finding, subject, frames)
        weight = call.get("weight") if call.has("weight") else None
        if weight is None and op == "embedding":
            weight = call.get("input")
        owner = modules.owner_of(weight) if weight is not None else None
        rows = weight.shape[0] if weight is not None else None
        need = f"{rows} rows, the ids need {values['max'] + 1}" if values.get("max") is not None and rows else None
        _module_origin(origins, owner, need)
    elif op == "ctc_loss":
        _data_origin(origins, finding, subject, frames)
        log_probs = call.get("log_probs")
        classes = log_probs.shape[-1]
        need = f"{classes} classes including the blank, the targets need {values['max'] + 1}" if values.get("max") is not None else None
        _module_origin(origins, _class_head(log_probs, classes), need)
    elif op == "one_hot":
        _data_origin(origins, finding, subject, frames)
        if location and location.get("line"):
            filename = frames[0].f_code.co_filename if frames else None
            size = flow.keyword_at(filename, location["line"], "num_classes") if filename else None
            for name in flow.names_in(size):
                made = flow.made_at(filename, location["line"], name)
                if made and made[1] == "assign":
                    origins.add(filename, made[0], None, "module", f"`{name}`, the num_classes given to one_hot, set here")
    else:
        _data_origin(origins, finding, subject, frames)
        holder = None
        for name in ("input", "self", "log_probs"):
            try:
                holder = call.get(name)
            except ValueError:
                continue
            if holder is not None:
                break
        if holder is not None and holder is not subject and frames:
            traced = flow.trace_value(frames, holder)
            if traced is not None and traced[1] == "assign":
                filename, line, function = traced[0]
                origins.add(filename, line, function, "data", "the indexed tensor was made here, with this size")
                for source, made, name in flow.size_origin(filename, line):
                    origins.add(source, made, None, "data", f"`{name}`, its size, set here")


def attach(error, origins):
    """Adds the origins to a GuardError: its diagnosis (`origin`, values, fix) and message."""
    if not origins.locations and not origins.values and not origins.hints:
        return error
    from ...errors import json_safe

    diagnosis = error.diagnosis
    if diagnosis is not None:
        diagnosis["origin"] = origins.locations
        diagnosis["values"].update(json_safe(origins.values))
        if origins.hints:
            diagnosis["fix"] = " ".join(h[:1].upper() + h[1:] + "." for h in origins.hints) + " " + diagnosis["fix"]
    error.values.update(origins.values)
    from ...errors import render_message

    # The message is drawn from the diagnosis: each origin a secondary span (as rustc's
    # "defined here"), the hints in the fix.
    render_message(error)
    return error
