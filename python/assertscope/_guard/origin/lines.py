"""Watching one call line by line: after which of the user's lines a local first holds a value.

What: `watch(function, wanted, holds, seconds)` runs `function()` once with line events on
the code objects `wanted` accepts (the user's), and records, in execution order, each line
after which a local of that frame first satisfies `holds`, and the return line of a frame
that returns a bad value no local of it held (name RETURNED). On Python 3.12+ the events come
from `sys.monitoring` (LINE and PY_RETURN enabled per code object, so library code runs
without a callback per line); before, from `sys.settrace`.
Why: re-reading a bad sample this way names the line of `__getitem__` (or of a helper it
calls) where the bad value first appears in a variable: a fact the origin engine anchors
its path on, in place of a guess from the source.
Safety: error path only. The tracer or monitoring tool is always removed, a previous
`sys.settrace` tracer (a debugger, coverage) is put back, and a read that runs past its
deadline is stopped at its next line event and abandoned.

Only the standard library is imported: the module is usable (and tested) on every Python
the package supports, with or without torch.
"""

import sys
import time

__all__ = ["watch", "Abandoned", "MAX_SEEN", "RETURNED"]

MAX_SEEN = 16  # lines recorded per watch
RETURNED = "<return>"  # the name recorded for a bad value made in a return expression


class Abandoned(BaseException):
    """Raised inside the watched call when its deadline passed (a BaseException, so that the
    user's `except Exception` does not swallow it)."""


class _Recorder:
    """The state of one watch: what each frame's locals were, and the lines found."""

    def __init__(self, holds, seconds):
        self.holds = holds
        self.deadline = time.monotonic() + seconds
        self.seen = []  # (file, line, function, name, value)
        self.known = {}  # frame -> {name: fingerprint}
        self.done = {}  # frame -> names already recorded
        self.last = {}  # frame -> the line that ran last

    def _fingerprint(self, value):
        # A tensor changed in place keeps its id; its version counter moves.
        return id(value), getattr(value, "_version", None)

    def line(self, frame, line):
        """A new line of `frame` is about to run: the previous one has finished."""
        if time.monotonic() > self.deadline:
            raise Abandoned()
        self.settle(frame)
        self.last[frame] = line

    def settle(self, frame):
        """Records the locals that first hold a matching value after the frame's last line."""
        previous = self.last.get(frame)
        known = self.known.setdefault(frame, {})
        done = self.done.setdefault(frame, set())
        for name, value in list(frame.f_locals.items()):
            fingerprint = self._fingerprint(value)
            if known.get(name) == fingerprint:
                continue
            known[name] = fingerprint
            if previous is None or name in done or len(self.seen) >= MAX_SEEN:
                continue
            matched = self.holds(value)
            if matched is not None:
                done.add(name)
                code = frame.f_code
                self.seen.append((code.co_filename, previous, code.co_name, name, matched))

    def returned(self, frame, value):
        """The frame returns `value`: a bad value made in the return expression itself
        (`return x, self.ids[name]`) is recorded under RETURNED, unless a local of the frame
        already held it."""
        self.settle(frame)
        line = self.last.get(frame)
        if not self.done.get(frame) and line is not None and len(self.seen) < MAX_SEEN:
            matched = _holding(value, self.holds, 2)
            if matched is not None:
                code = frame.f_code
                self.seen.append((code.co_filename, line, code.co_name, RETURNED, matched))
        for table in (self.known, self.done, self.last):
            table.pop(frame, None)


def _holding(value, holds, depth):
    """What `holds` finds in `value` or in its items (tuples, lists, dicts, `depth` levels)."""
    matched = holds(value)
    if matched is not None or not depth:
        return matched
    if isinstance(value, dict):
        items = list(value.values())[:64]
    elif isinstance(value, (list, tuple)):
        items = list(value)[:64]
    else:
        return None
    for item in items:
        matched = _holding(item, holds, depth - 1)
        if matched is not None:
            return matched
    return None


def watch(function, wanted, holds, seconds):
    """(result, seen, abandoned) of `function()` run once under line events.

    wanted(code) -> bool   the code objects to watch (the user's)
    holds(value)           the matched bad value when `value` holds it, else None
    seconds                the deadline: past it the call is stopped at its next line event
    seen                   [(file, line, function, local name, matched value)], in order
    abandoned              True when the deadline stopped it (result is then None)
    Exceptions the call raises propagate, after the tracer is removed."""
    recorder = _Recorder(holds, seconds)
    run = _with_monitoring if hasattr(sys, "monitoring") else _with_settrace
    try:
        result = run(function, wanted, recorder)
    except Abandoned:
        return None, recorder.seen, True
    return result, recorder.seen, False


def _with_settrace(function, wanted, recorder):
    def local(frame, event, arg):
        if event == "line":
            recorder.line(frame, frame.f_lineno)
        elif event == "return":
            recorder.returned(frame, arg)
        return local

    def start(frame, event, arg):
        if event != "call" or not wanted(frame.f_code):
            return None
        recorder.known[frame] = {k: recorder._fingerprint(v) for k, v in frame.f_locals.items()}
        return local

    previous = sys.gettrace()
    sys.settrace(start)
    try:
        return function()
    finally:
        sys.settrace(previous)


def _free_tool():
    monitoring = sys.monitoring
    for tool in (3, 4, monitoring.PROFILER_ID, monitoring.OPTIMIZER_ID):
        if monitoring.get_tool(tool) is None:
            return tool
    return None


def _with_monitoring(function, wanted, recorder):
    monitoring = sys.monitoring
    events = monitoring.events
    tool = _free_tool()
    if tool is None:  # every tool id taken (debuggers, profilers): the older way still works
        return _with_settrace(function, wanted, recorder)
    instrumented = []

    def on_start(code, offset):
        if wanted(code):
            frame = sys._getframe(1)
            recorder.known[frame] = {k: recorder._fingerprint(v) for k, v in frame.f_locals.items()}
            if code not in instrumented:
                instrumented.append(code)
                monitoring.set_local_events(tool, code, events.LINE | events.PY_RETURN)

    def on_line(code, line):
        recorder.line(sys._getframe(1), line)

    def on_return(code, offset, value):
        recorder.returned(sys._getframe(1), value)

    monitoring.use_tool_id(tool, "assertscope")
    try:
        monitoring.register_callback(tool, events.PY_START, on_start)
        monitoring.register_callback(tool, events.LINE, on_line)
        monitoring.register_callback(tool, events.PY_RETURN, on_return)
        monitoring.set_events(tool, events.PY_START)
        return function()
    finally:
        monitoring.set_events(tool, 0)
        for code in instrumented:
            monitoring.set_local_events(tool, code, 0)
        for event in (events.PY_START, events.LINE, events.PY_RETURN):
            monitoring.register_callback(tool, event, None)
        monitoring.free_tool_id(tool)
