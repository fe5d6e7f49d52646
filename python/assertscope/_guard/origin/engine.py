"""The in-process call of the origin engine: without `assertscope run`, the guard hands its
report to `assertscope origin -` and takes the proved path back.

What: `trace(report)` runs the binary with the guard report on stdin (a few seconds at
most) and returns the diagnosis it prints, with `origin`, `origin_end` and
`dataset_indices` filled in. The binary is `$ASSERTSCOPE_BIN` (set by `run`), else
`assertscope` on PATH, else the one beside this Python (`pip install` puts it there).
Why: a GuardError raised in a notebook or under `assertscope.guard()` shows the same path
as `run` does; the engine (Rust, on the user's source) is one, shared by both.
Failure: no binary, a binary without the `origin` command, a timeout or a bad answer each
give one note and no path; the diagnosis is never hidden.
"""

import json
import os
import shutil
import subprocess
import sys
import sysconfig

from ... import _contract

TIMEOUT_SECONDS = 5.0

_unusable = {}  # binary path -> the note saying why it cannot trace (asked once per process)


def binary():
    """The assertscope binary to call, or None."""
    explicit = os.environ.get(_contract.BIN_ENV)
    if explicit:
        return explicit
    found = shutil.which("assertscope")
    if found:
        return found
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = os.path.join(folder or "", "assertscope")
        if folder and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def trace(report, timeout=None):
    """(diagnosis, note): the engine's diagnosis for a guard report, or None and a note."""
    timeout = TIMEOUT_SECONDS if timeout is None else timeout
    path = binary()
    if path is None:
        return None, (
            "the origin path is not drawn: no assertscope binary was found "
            f"(set {_contract.BIN_ENV} or put assertscope on PATH)"
        )
    if path in _unusable:
        return None, _unusable[path]
    try:
        done = subprocess.run(
            [path, "origin", "-"],
            input=json.dumps(report, allow_nan=False),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None, f"the origin path is not drawn: `assertscope origin` took over {timeout:g} s"
    except OSError as error:
        _unusable[path] = f"the origin path is not drawn: {path} cannot be run ({error.strerror or error})"
        return None, _unusable[path]
    if done.returncode != 0:
        first = next((line.strip() for line in done.stderr.splitlines() if line.strip()), "")
        if _lacks_origin(done.stderr):
            _unusable[path] = f"the origin path is not drawn: {path} is too old (it has no `origin` command)"
            return None, _unusable[path]
        return None, f"the origin path is not drawn: `assertscope origin` failed (exit {done.returncode}): {first[:200]}"
    try:
        answer = json.loads(done.stdout)
        diagnosis = answer["diagnosis"] if "diagnosis" in answer else answer
        steps = diagnosis.get("origin")
        if not isinstance(steps, list):
            raise ValueError("no `origin` list")
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        return None, f"the origin path is not drawn: `assertscope origin` answered something unreadable ({error})"
    return diagnosis, None


def _lacks_origin(stderr):
    """clap's answer to an unknown subcommand."""
    text = stderr.lower()
    return "unrecognized subcommand" in text or ("origin" in text and "unexpected argument" in text)


def forget():
    """Forget which binaries could not trace (tests that swap the binary)."""
    _unusable.clear()
