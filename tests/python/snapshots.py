"""Snapshots of user-visible output, in the files and the format of the Rust tests' insta
snapshots (tests/snapshots/*.snap): one place to review what assertscope prints, whichever
side produced it. A snapshot that differs fails with both texts; ASSERTSCOPE_BLESS=1
writes the new text instead (then review the change with `git diff tests/snapshots`)."""

import os
import re
from pathlib import Path

SNAPSHOTS = Path(__file__).resolve().parents[1] / "snapshots"


def normalise(text, replacements=()):
    """The text with what changes between runs replaced: the given (old, new) pairs first,
    then the lines Python's version draws differently (caret lines under a traceback's code)."""
    for old, new in replacements:
        if old:
            text = text.replace(str(old), new)
    lines = [line for line in text.splitlines() if not re.fullmatch(r"\s*[\^~]+\s*", line)]
    return "\n".join(line.rstrip() for line in lines)


def assert_snapshot(name, text, source):
    """Compares `text` with tests/snapshots/NAME.snap (written by `source`, a test file)."""
    path = SNAPSHOTS / f"{name}.snap"
    text = text.rstrip("\n")
    if os.environ.get("ASSERTSCOPE_BLESS") == "1":
        path.write_text(f"---\nsource: {source}\nexpression: {name}\n---\n{text}\n")
        return
    assert path.exists(), f"no snapshot {path}: run with ASSERTSCOPE_BLESS=1 to write it"
    stored = path.read_text().split("---\n", 2)[2].rstrip("\n")
    assert text == stored, f"{path.name} differs (ASSERTSCOPE_BLESS=1 writes the new one):\n--- stored\n{stored}\n--- now\n{text}"
