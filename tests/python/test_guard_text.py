"""The GuardError's text is a contract with the binary (src/contract.rs `guard_text`,
assertscope/_contract.py): for every cause the guard raises, the traceback Python prints
for a real GuardError is read back by `assertscope explain`, which finds the cause, the op,
the user's line and the values the report states."""

import json
import re
import subprocess
import traceback
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import assertscope
from assertscope import GuardError, _contract, _hide, kb
from conftest import assertscope_binary
from op_cases import CASES

GUARD = Path(assertscope.__file__).parent / "_guard"

# Causes raised outside the op table of op_cases: by a check of shapes, and by the recorders
# of batch norm and recurrent layers.
EXTRA = {
    "batch sizes": lambda: F.cross_entropy(torch.randn(4, 3), torch.tensor([0, 1, 2, 1, 0])),
    "float class ids": lambda: F.cross_entropy(torch.randn(4, 3), torch.tensor([0.0, 1.0, 2.0, 1.0])),
    "batch norm on one sample": lambda: torch.nn.BatchNorm1d(3).train()(torch.randn(1, 3)),
    "GRU state of another batch size": lambda: torch.nn.GRU(3, 4, batch_first=True)(torch.randn(2, 5, 3), torch.zeros(1, 3, 4)),
}
MAKERS = [(repr(case), case.bad) for case in CASES] + list(EXTRA.items())


def guard_error(make):
    with assertscope.guard(mode="sync"):
        try:
            make()
        except GuardError as error:
            return error
    raise AssertionError("no GuardError")


def printed(error):
    """The traceback as the interpreter prints it (the guard's frames cut, as its hook does)."""
    tb = _hide.trimmed(error)
    return "".join(traceback.format_exception(type(error), error, tb))


def explain(text):
    run = subprocess.run([assertscope_binary(), "explain", "--json", "-"], input=text, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr + text
    return json.loads(run.stdout)["diagnoses"][0]


def causes_the_guard_raises():
    """Every cause id the guard's source names."""
    ids = set(kb.cause_ids())
    return {m for path in GUARD.rglob("*.py") for m in re.findall(r'"([a-z-]+)"', path.read_text()) if m in ids}


def test_every_cause_the_guard_raises_is_read_back_here():
    raised = {guard_error(make).cause for _, make in MAKERS}
    assert causes_the_guard_raises() <= raised, causes_the_guard_raises() - raised


def same(read, written):
    if isinstance(written, float) or isinstance(read, float):
        return abs(read - written) <= abs(written) * 1e-3 + 1e-12
    if isinstance(written, list):
        return len(read) == len(written) and all(same(r, w) for r, w in zip(read, written))
    return read == written


_read = {}


def read_back(name, make):
    """(the GuardError, what explain read back from its printed traceback), once per case."""
    if name not in _read:
        error = guard_error(make)
        text = printed(error)
        _read[name] = (error, text, explain(text))
    return _read[name]


@pytest.mark.parametrize("name,make", MAKERS, ids=[name for name, _ in MAKERS])
def test_explain_reads_back_cause_op_line_and_values(name, make):
    error, text, read = read_back(name, make)
    assert text.splitlines()[-len(str(error).splitlines())].startswith(
        f"{_contract.GUARD_ERROR_TYPE}: {_contract.headline(error.cause, error.diagnosis['title'])}"
    ), text
    assert "/assertscope/" not in text, text  # no frame of the guard
    assert (read["cause"], read["op"], read["evidence"][0]["kind"]) == (error.cause, error.op, "guard"), read
    assert read["location"]["line"] == error.location["line"], (read["location"], error.location)
    assert read["location"]["file"] == error.location["file"] and read["location"]["function"] == error.location["function"]
    written = error.diagnosis["values"]
    for key in (key for key in read["values"] if key in written):
        assert same(read["values"][key], written[key]), (key, read["values"][key], written[key])
    # The numbers of a range finding (`3 of 64 ... outside [0, 5)`) are all read back.
    if re.match(r"\d+ of \d+ .* outside \[", error.diagnosis["evidence"][0]["text"].split(": ", 1)[1]):
        assert {"bad_count", "numel"} <= set(read["values"]) & set(written), read["values"]


def test_every_cause_has_its_values_read_back():
    shared = {}
    for name, make in MAKERS:
        error, _, read = read_back(name, make)
        shared.setdefault(error.cause, set()).update(key for key in read["values"] if key in error.diagnosis["values"])
    assert all(shared.values()), {cause: keys for cause, keys in shared.items() if not keys}


@pytest.mark.parametrize("target", [5, 255, -3])
def test_why_quotes_the_value_of_this_failure(target):
    # The cause's explanation quoted "Target 10 is out of bounds" whatever the label was.
    error = guard_error(lambda: F.cross_entropy(torch.zeros(2, 5), torch.tensor([0, target])))
    assert f"`IndexError: Target {target} is out of bounds.`" in error.diagnosis["explanation"]
    # The why section: the snippet above it may draw this file's lines, this comment too.
    assert "Target 10 " not in " ".join(str(error).split("\nwhy: ", 1)[1].split())
