"""The knowledge base (kb/*.toml), read once and cached.

The binary embeds the same files; every word the guard prints about a cause (title,
explanation, fix, checklist step) comes from causes.toml.
"""

import os
import threading

__all__ = ["KB_DIR", "load", "cause", "cause_ids"]

KB_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kb")

_cache = {}
_lock = threading.Lock()


def _parse(text):
    try:
        import tomllib
    except ImportError:  # Python 3.9 and 3.10
        from . import _toml as tomllib
    return tomllib.loads(text)


def load(name):
    """The parsed kb/<name>.toml (a dict), cached for the life of the process."""
    with _lock:
        if name not in _cache:
            path = os.path.join(KB_DIR, name + ".toml")
            with open(path, encoding="utf-8") as f:
                _cache[name] = _parse(f.read())
        return _cache[name]


def cause(cause_id):
    """The [[cause]] entry with this id (title, explanation, fix, checklist_step, ...)."""
    for entry in load("causes")["cause"]:
        if entry["id"] == cause_id:
            return entry
    raise KeyError(f"unknown cause id {cause_id!r} (not in kb/causes.toml)")


def cause_ids():
    return [entry["id"] for entry in load("causes")["cause"]]
