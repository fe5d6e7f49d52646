"""Guard reports for `assertscope run`: one JSON file per GuardError, written to
$ASSERTSCOPE_REPORT_DIR as guard-<run>-<host>-<pid>-<n>.json, <run> being the run's id
($ASSERTSCOPE_RUN_ID, so that `run` never takes an older run's report for its own), or
guard-<host>-<pid>-<n>.json outside `run`. The report directory may be shared with other
users: the file is written under a fresh random name (O_EXCL | O_NOFOLLOW, as mkstemp
does) and renamed into place, so a planted symlink is never followed and a reader never
sees half a file. A report says how far its error got ("outcome": "raised", until
_outcome marks it "uncaught").
"""

import itertools
import json
import os
import socket
import sys
import tempfile
import time

from . import _contract

SCHEMA = _contract.GUARD_REPORT_SCHEMA
REPORT_DIR_ENV = _contract.REPORT_DIR_ENV
RUN_ID_ENV = _contract.RUN_ID_ENV

_counter = itertools.count(1)


def report(diagnosis, runtime=None):
    """The guard-report object for a diagnosis, with this process's identity, and the
    runtime facts the origin engine reads (`runtime`, see the origin protocol) when given."""
    document = {
        "schema": SCHEMA,
        "time": time.time(),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "rank": _contract.env_number(_contract.RANK_VARIABLES),
        "local_rank": _contract.env_number(_contract.LOCAL_RANK_VARIABLES),
        "world_size": _contract.env_number(_contract.WORLD_SIZE_VARIABLES),
        "argv": list(sys.argv),
        "run": _run_id(),
        "diagnosis": diagnosis,
        "outcome": "raised",
    }
    if runtime is not None:
        document["runtime"] = runtime
    return document


def under_run():
    """Whether `assertscope run` collects this process's reports (it names its run): it
    then shows the report when the command ends."""
    return bool(os.environ.get(REPORT_DIR_ENV)) and _run_id() is not None


def _run_id():
    run = os.environ.get(RUN_ID_ENV, "")
    ok = run and len(run) <= 64 and all(c.isascii() and (c.isalnum() or c in "_.") for c in run)
    return run if ok else None


def _prefix():
    run = _run_id()
    return f"guard-{run + '-' if run else ''}"


def write(diagnosis, directory=None, runtime=None):
    """Writes a report when a report directory is set; returns its path or None. Never raises."""
    directory = directory or os.environ.get(REPORT_DIR_ENV)
    if not directory or diagnosis is None:
        return None
    try:
        host = _contract.file_name_host(socket.gethostname())
        name = f"{_prefix()}{host}-{os.getpid()}-{next(_counter)}.json"
        path = os.path.join(directory, name)
        _write_json(path, report(diagnosis, runtime))
        return path
    except Exception as exc:  # noqa: BLE001 - the user's error matters more than our report
        sys.stderr.write(f"assertscope: could not write the guard report to {directory}: {exc}\n")
        return None


def replace(path, obj):
    """Rewrites a report in place, as write does (a reader sees the old or the new one)."""
    _write_json(path, obj)


def _write_json(path, obj):
    directory, name = os.path.split(path)
    fd, temp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=2, allow_nan=False)
            f.write("\n")
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def reports_of_this_run():
    """(path, report) of every readable report of this run in the report directory."""
    directory = os.environ.get(REPORT_DIR_ENV)
    if not directory:
        return
    prefix = _prefix()
    for name in sorted(os.listdir(directory)):
        if name.startswith(prefix) and name.endswith(".json"):
            path = os.path.join(directory, name)
            try:
                fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
                with os.fdopen(fd, encoding="utf-8") as f:
                    found = json.load(f)
            except (OSError, ValueError):
                continue
            if isinstance(found, dict) and found.get("schema") == SCHEMA:
                yield path, found
