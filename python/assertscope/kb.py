"""The knowledge base, read once and cached.

kb/*.toml is the source, which the binary embeds; this package reads the same data from
kb/knowledge-base.json, generated from the TOML and checked to be in sync by the binary's
tests (tests/kb_json.rs), so every Python reads it with the standard library. Every word
the guard prints about a cause (title, explanation, fix, checklist step) comes from
causes.toml, and every specific hint from hints.toml.
"""

import json
import os
import threading

__all__ = ["KB_DIR", "load", "cause", "cause_ids", "explanation", "hint", "hint_entry", "render"]

KB_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kb")

_cache = {}
_lock = threading.Lock()


_JSON_FORM = os.path.join(KB_DIR, "knowledge-base.json")


def load(name):
    """The content of kb/<name>.toml (a dict), cached for the life of the process."""
    with _lock:
        if not _cache:
            with open(_JSON_FORM, encoding="utf-8") as f:
                _cache.update(json.load(f))
    if name not in _cache:
        raise KeyError(f"no knowledge-base file {name}.toml")
    return _cache[name]


def cause(cause_id):
    """The [[cause]] entry with this id (title, explanation, fix, checklist_step, ...)."""
    for entry in load("causes")["cause"]:
        if entry["id"] == cause_id:
            return entry
    raise KeyError(f"unknown cause id {cause_id!r} (not in kb/causes.toml)")


def explanation(entry, values=None, sources=True):
    """A cause's explanation in one paragraph, with `{value}` (the bad value, as PyTorch's
    error quotes it) filled from this failure's values, or `N` when they hold none; followed
    by the usual sources unless `sources` is false (a specific fix found which it is). As the
    binary's Cause::explanation_with / explanation_and_sources."""
    from ._contract import readable_number as number

    values = values or {}
    value = values.get("value")
    for key in ("bad_values", "distinct_bad_values"):
        if value is None and values.get(key):
            value = values[key][0]
    shown = number(value) if isinstance(value, (int, float)) else "N"
    explained = " ".join(entry["explanation"].split()).replace("{value}", shown)
    usual = " ".join(entry.get("sources", "").split())
    return f"{explained} Typical sources: {usual}" if sources and usual else explained


def cause_ids():
    return [entry["id"] for entry in load("causes")["cause"]]


def hint_entry(hint_id):
    """The [[hint]] entry with this id (id, cause, text)."""
    for entry in load("hints")["hint"]:
        if entry["id"] == hint_id:
            return entry
    raise KeyError(f"unknown hint id {hint_id!r} (not in kb/hints.toml)")


def render(text, values):
    """`text` with each `{name}` filled from `values`, as the binary's Hint::render does:
    strings go in as they are, other values as compact JSON. None if a placeholder has no
    value or a brace is never closed."""
    out = []
    rest = text
    while True:
        open_at = rest.find("{")
        if open_at < 0:
            break
        out.append(rest[:open_at])
        close_at = rest.find("}", open_at)
        if close_at < 0:
            return None
        name = rest[open_at + 1 : close_at]
        if name not in values:
            return None
        value = values[name]
        out.append(value if isinstance(value, str) else _json(value))
        rest = rest[close_at + 1 :]
    out.append(rest)
    return "".join(out)


def _json(value):
    # serde_json's compact form: no spaces after separators, non-ASCII kept.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def hint(hint_id, **values):
    """The text of a hint with its placeholders filled. A missing id or value is a
    programming error (a test renders every hint the guard uses), so it raises."""
    text = render(hint_entry(hint_id)["text"], values)
    if text is None:
        raise KeyError(f"hint {hint_id!r} needs a value that was not given (given: {sorted(values)})")
    return text
