"""kb/hints.toml is the one home of the hint sentences the guard prints: every hint the
guard renders exists and gets a value for each placeholder, each guard error's fix is a
hint of the error's own cause (or the cause's own fix, never both), and Python's render
gives the binary's strings."""

import ast
import json
import re
import subprocess
from pathlib import Path

import pytest

import assertscope
from assertscope import GuardError, kb

from op_cases import CASES
from conftest import assertscope_binary

REPO = Path(__file__).resolve().parents[2]
GUARD = REPO / "python" / "assertscope" / "_guard"


def guard_hint_calls():
    """(file:line, id, keyword names) of every `kb.hint(...)` call in the guard."""
    calls = []
    for path in sorted(GUARD.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "hint"):
                continue
            if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "kb"):
                continue
            where = f"{path.relative_to(REPO)}:{node.lineno}"
            assert len(node.args) == 1 and isinstance(node.args[0], ast.Constant), f"{where}: the id must be a literal"
            assert all(k.arg is not None for k in node.keywords), f"{where}: values must be named, not **spread"
            calls.append((where, node.args[0].value, [k.arg for k in node.keywords]))
    return calls


def test_every_hint_the_guard_names_exists_and_renders_with_the_values_it_passes():
    calls = guard_hint_calls()
    assert len(calls) >= 25, calls
    for where, hint_id, names in calls:
        entry = kb.hint_entry(hint_id)
        text = kb.render(entry["text"], {name: 7 for name in names})
        assert text is not None, f"{where}: {hint_id} needs {re.findall(r'{(.*?)}', entry['text'])}, given {names}"
        assert "{" not in text and "}" not in text, f"{where}: {text}"


def _as_pattern(text):
    """A hint's text as a regex, each placeholder matching any value."""
    return re.compile("".join(".+?" if i % 2 else re.escape(part) for i, part in enumerate(re.split(r"{(\w+)}", text))))


HINT_PATTERNS = [(entry, _as_pattern(entry["text"])) for entry in kb.load("hints")["hint"]]


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_each_guard_error_gives_one_fix_a_hint_of_its_own_cause_or_the_causes_fix(case):
    with assertscope.guard(mode="sync"):
        with pytest.raises(GuardError) as info:
            case.bad()
    error = info.value
    fix = error.diagnosis["fix"]
    cause_fix = " ".join(kb.cause(error.cause)["fix"].split())
    # One piece of advice: the hint for this case replaces the cause's general fix.
    assert "= help:" not in str(error)
    if fix != cause_fix:
        matching = [entry for entry, pattern in HINT_PATTERNS if pattern.fullmatch(fix[:1].lower() + fix[1:]) or pattern.fullmatch(fix)]
        assert matching, f"the fix is neither the cause's nor a hint of kb/hints.toml: {fix}"
        assert error.cause in {entry["cause"] for entry in matching}, (error.cause, [e["id"] for e in matching])
        assert cause_fix not in fix


# The same strings are expected from the binary's Hint::render in tests/kb_hints.rs.
FIXED = [
    (
        "one-based-labels",
        {"max": 10, "last": 9, "needed": 11},
        "The labels look 1-based: a model with 10 outputs takes class ids 0 to 9, so the label 10 is out of "
        "range. Subtract 1 from every label (`y - 1`), or give the model 11 outputs if class 0 is a real class.",
    ),
    (
        "nan-before-range-check",
        {"metric": "loss", "metric_value": "nan", "metric_line": 4},
        "NaN fails every range check: the op only noticed the NaN that training produced earlier (loss = nan "
        "on log line 4).",
    ),
    (
        "index-past-tensor",
        {"value": -6, "range": "[-5, 5)", "what": "dimension 0 of a tensor of shape [5, 4]"},
        "Index -6 is outside [-5, 5), the valid range for dimension 0 of a tensor of shape [5, 4]: the indexed "
        "tensor is smaller than the code that made the indices assumes (a table or cache built for a shorter "
        "length, ids counted from 1, indices computed before a crop or filter).",
    ),
]


@pytest.mark.parametrize("hint_id,values,expected", FIXED, ids=[f[0] for f in FIXED])
def test_render_gives_the_strings_the_binary_gives(hint_id, values, expected):
    assert kb.hint(hint_id, **values) == expected


def test_render_fills_strings_as_they_are_and_other_values_as_json():
    values = {"list": [1, 2], "float": 1.5, "flag": True, "none": None, "text": "ok"}
    assert kb.render("{list} {float} {flag} {none} {text}", values) == "[1,2] 1.5 true null ok"
    assert kb.render("a {missing} b", values) is None
    assert kb.render("a {text", values) is None
    assert kb.render("no placeholder", values) == "no placeholder"
    with pytest.raises(KeyError):
        kb.hint("one-based-labels", max=10)
    with pytest.raises(KeyError):
        kb.hint("no-such-hint")


@pytest.mark.parametrize(
    "target,hint_id,values",
    [
        (10, "one-based-labels", {"max": 10, "last": 9, "needed": 11}),
        (255, "void-label-255", {}),
        (12, "head-too-small", {"max": 12, "bound": 10, "needed": 13, "last": 9}),
        (-1, "padding-label", {"value": -1}),
    ],
)
def test_explain_renders_a_hint_as_python_does(tmp_path, target, hint_id, values):
    log = tmp_path / "train.log"
    log.write_text(
        "num_classes = 10\nTraceback (most recent call last):\n"
        '  File "train.py", line 12, in <module>\n    loss = F.cross_entropy(logits, y)\n'
        f"IndexError: Target {target} is out of bounds.\n"
    )
    proc = subprocess.run([assertscope_binary(), "explain", "--json", str(log)], capture_output=True, text=True)
    diagnosis = json.loads(proc.stdout)["diagnoses"][0]
    assert diagnosis["fix"].split("\n\n")[0] == kb.hint(hint_id, **values)
