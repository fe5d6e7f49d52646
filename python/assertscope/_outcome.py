"""Whether a GuardError failed its process: a report is written with "outcome": "raised"
as the error is made (_report), and marked "uncaught" here once the error reaches the top
of a thread or of the process, or ends it. `run` counts only uncaught errors as failures;
an error the program caught and went on past is a note.

Where an error reaches the top, and how it is seen there:
  - the main thread: sys.excepthook, and at the end of the interpreter the last error
    Python kept (sys.last_exc, sys.last_value), for programs that replace sys.excepthook;
  - another thread: threading.excepthook;
  - a multiprocessing.Process: its run() ending with the error (the process prints it and
    exits 1, with no hook of its own).
An error counts when it is the one that got there or the cause or context of it, or when
its text is in that error's message: a DataLoader worker's error re-raised in the main
process, a spawned rank's traceback in torch.multiprocessing's ProcessRaisedException, a
Pool worker's error unpickled in its parent. The reports of every process of the run are
looked through for it.

Nothing here runs unless a report directory is set, and nothing but the hooks themselves
runs before an error reaches the top.
"""

import os
import sys

from . import _report

__all__ = ["install", "install_with_the_guard", "mark_uncaught"]

_installed = set()


def install():
    """sys.excepthook and the end of the interpreter: cheap enough for every start-up."""
    if "main" in _installed or not os.environ.get(_report.REPORT_DIR_ENV):
        return
    _installed.add("main")
    previous = sys.excepthook

    def excepthook(kind, value, traceback):
        mark_uncaught(value)
        previous(kind, value, traceback)

    sys.excepthook = excepthook
    import atexit

    atexit.register(_at_exit)


def install_with_the_guard():
    """Threads and multiprocessing processes, once the guard is on (torch has imported
    both), and the hooks above if the start-up hook did not install them."""
    install()
    if "late" in _installed or not os.environ.get(_report.REPORT_DIR_ENV):
        return
    _installed.add("late")
    import threading

    previous = threading.excepthook

    def thread_excepthook(args):
        mark_uncaught(args.exc_value)
        previous(args)

    threading.excepthook = thread_excepthook
    process = sys.modules.get("multiprocessing.process")
    if process is not None and hasattr(process.BaseProcess, "_bootstrap"):
        bootstrap = process.BaseProcess._bootstrap

        def _bootstrap(self, *args, **kwargs):
            run = self.run

            def run_marking():
                try:
                    return run()
                except BaseException as error:
                    if not isinstance(error, SystemExit):
                        mark_uncaught(error)
                    raise

            self.run = run_marking
            return bootstrap(self, *args, **kwargs)

        process.BaseProcess._bootstrap = _bootstrap


def _at_exit():
    last = getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)
    if last is not None:
        mark_uncaught(last)


def mark_uncaught(error):
    """Marks the reports of the GuardErrors in or behind `error` uncaught. Never raises."""
    try:
        _mark(error)
    except Exception:  # noqa: BLE001 - the user's error matters more than our bookkeeping
        pass


def _mark(error):
    from .errors import GuardError

    chain, texts = [], []
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        chain.append(error)
        texts.append(str(error))
        members = getattr(error, "exceptions", None)  # an ExceptionGroup's
        if isinstance(members, (list, tuple)):
            for member in members:
                if id(member) not in seen:
                    seen.add(id(member))
                    chain.append(member)
                    texts.append(str(member))
        error = error.__cause__ or error.__context__
    diagnoses = [e.diagnosis for e in chain if isinstance(e, GuardError) and isinstance(e.diagnosis, dict)]
    text = " ".join(" ".join(texts).split())
    for path, report in _report.reports_of_this_run():
        if report.get("outcome") != "raised":
            continue
        diagnosis = report.get("diagnosis") or {}
        if any(_same(diagnosis, d) for d in diagnoses) or _told_in(diagnosis, text):
            report["outcome"] = "uncaught"
            _report.replace(path, report)


def _same(written, diagnosis):
    import json

    return written == json.loads(json.dumps(diagnosis, allow_nan=False, default=str))


def _told_in(diagnosis, text):
    """The report's error is in the text of another (its message, re-raised elsewhere): the
    one line a GuardError says under `run`, or the finding its full report states."""
    from . import _contract

    cause, title = diagnosis.get("cause"), diagnosis.get("title")
    if cause and title:
        pointer = " ".join(f"{_contract.headline(cause, title)} {_contract.REPORTED_BY_RUN}".split())
        if pointer in text:
            return True
    evidence = diagnosis.get("evidence") or []
    found = evidence[0].get("text", "") if evidence and isinstance(evidence[0], dict) else ""
    op = diagnosis.get("op") or ""
    if op and found.startswith(f"{op}: "):
        found = found[len(op) + 2 :]
    found = " ".join(found.split())[:80]
    return bool(found) and f"error[{diagnosis.get('cause')}]" in text and found in text
