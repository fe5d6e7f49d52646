"""The in-process call of the origin engine: without `run`, a GuardError hands its report to
`assertscope origin -` and draws the path it gets back; a binary that is missing, too old,
slow or failing gives one note and leaves the diagnosis whole; under `run` (a report
directory) the guard never calls it, and `run` tells its child where the binary is.

The attaching is tested with a small stand-in binary that prints a canned answer; the real
engine is tested end to end once the binary has the `origin` command."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import assertscope_binary

import assertscope
from assertscope import GuardError
from assertscope._guard.origin import engine

BAD_LABEL = textwrap.dedent(
    """\
    import torch
    import torch.nn as nn
    from torch.utils.data import DataLoader, Dataset

    NAMES = ["cat", "dog", "owl", "eel"] + ["cat", "dog", "owl"] * 9
    MAP = {"cat": 0, "dog": 1, "owl": 2}


    class Animals(Dataset):
        def __init__(self):
            self.labels = [MAP.get(name, 3) for name in NAMES]

        def __len__(self):
            return len(self.labels)

        def __getitem__(self, i):
            label = self.labels[i]
            return torch.ones(2), label


    head = nn.Linear(2, 3)
    for x, y in DataLoader(Animals(), batch_size=8):
        x, y = x.to("cpu"), y.to("cpu")
        loss = nn.functional.cross_entropy(head(x), y)
    """
)


def canned(script):
    """The engine's answer for BAD_LABEL, as the protocol has it (files named as the
    diagnosis' location names them: relative to the working directory)."""
    script = script.name
    return {
        "origin": [
            {"file": str(script), "line": 23, "function": "<module>", "code": 'x, y = x.to("cpu"), y.to("cpu")',
             "role": "move", "chain": "value", "note": "moved to the device", "confirmed": False},
            {"file": str(script), "line": 17, "function": "__getitem__", "code": "label = self.labels[i]",
             "role": "read", "chain": "value", "note": "read from `self.labels`", "confirmed": True},
            {"file": str(script), "line": 11, "function": "__init__",
             "code": "self.labels = [MAP.get(name, 3) for name in NAMES]", "role": "made", "chain": "value",
             "note": "`.get(name, 3)` gives 3 for a name missing from the map", "confirmed": True},
        ],
        "origin_end": None,
        "dataset_indices": [3],
    }


def stand_in(tmp_path, body):
    """An executable `assertscope` that runs `body` (Python, with `request` the text read
    from stdin and `argv`), keeping what it was sent in `request.json`."""
    path = tmp_path / "bin" / "assertscope"
    path.parent.mkdir()
    path.write_text(
        f"#!{sys.executable}\n"
        "import json, sys, time\n"
        "argv = sys.argv[1:]\n"
        "request = sys.stdin.read()\n"
        f"open({str(tmp_path / 'request.json')!r}, 'w').write(request)\n" + textwrap.dedent(body)
    )
    path.chmod(0o755)
    return path


def origin_notes(diagnosis):
    """The diagnosis' notes about its origin path: evidence of kind `origin`."""
    return [e["text"] for e in diagnosis["evidence"] if e["kind"] == "origin"]


def fail_in(tmp_path, monkeypatch, binary, source=BAD_LABEL):
    script = tmp_path / "train.py"
    script.write_text(source)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ASSERTSCOPE_REPORT_DIR", raising=False)
    monkeypatch.setenv("ASSERTSCOPE_BIN", str(binary))
    engine.forget()
    import runpy

    with pytest.raises(GuardError) as caught:
        with assertscope.guard(mode="sync"):
            runpy.run_path(str(script), run_name="__main__")
    return caught.value, script


def test_the_engines_path_becomes_numbered_spans_with_the_made_step_last(tmp_path, monkeypatch):
    script = tmp_path / "train.py"
    binary = stand_in(
        tmp_path,
        f"""
        assert argv == ["origin", "-"], argv
        report = json.loads(request)
        report["diagnosis"].update(json.loads({json.dumps(canned(script))!r}))
        print(json.dumps(report))
        """,
    )
    error, _ = fail_in(tmp_path, monkeypatch, binary)
    sent = json.loads((tmp_path / "request.json").read_text())
    assert sent["schema"] == "assertscope.guard-report/1"
    assert sent["runtime"]["dataset"]["indices"] == [3] and sent["runtime"]["operand"]["parameter"] == "target"
    diagnosis = error.diagnosis
    assert diagnosis["origin"] == canned(script)["origin"]
    assert diagnosis["origin_end"] is None and diagnosis["dataset_indices"] == [3]
    assert diagnosis["values"]["dataset_indices"] == [3]
    assert origin_notes(diagnosis) == []
    text = str(error)
    labels = ["1. moved to the device", "2. read from `self.labels`", "3. made here: `.get(name, 3)` gives 3 for a name missing from the map"]
    assert all(label in text for label in labels), text
    # One snippet of train.py, in line order: the made step (line 11) is drawn first.
    assert text.index("11 |") < text.index("17 |") < text.index("23 |") < text.index("24 |")


def test_where_the_trail_ends_is_the_next_numbered_span(tmp_path, monkeypatch):
    script = tmp_path / "train.py"
    answer = {**canned(script), "origin": canned(script)["origin"][:2]}
    answer["origin_end"] = {"file": script.name, "line": 17, "code": "label = self.labels[i]",
                            "note": "traced to `self.labels` in `Animals.__init__`; not followed further"}
    binary = stand_in(
        tmp_path,
        f"""
        report = json.loads(request)
        report["diagnosis"].update(json.loads({json.dumps(answer)!r}))
        print(json.dumps(report))
        """,
    )
    error, _ = fail_in(tmp_path, monkeypatch, binary)
    assert error.diagnosis["origin_end"]["line"] == 17 and origin_notes(error.diagnosis) == []
    text = str(error)
    assert "2. read from `self.labels`" in text
    assert "3. traced to `self.labels` in `Animals.__init__`; not followed further" in text
    assert "made here" not in text


def test_a_binary_without_the_origin_command_leaves_one_note_and_the_diagnosis_whole(tmp_path, monkeypatch):
    binary = stand_in(
        tmp_path,
        """
        sys.stderr.write("error: unrecognized subcommand 'origin'\\n\\nUsage: assertscope <COMMAND>\\n")
        sys.exit(2)
        """,
    )
    error, _ = fail_in(tmp_path, monkeypatch, binary)
    assert origin_notes(error.diagnosis) == [f"the origin path is not drawn: {binary} is too old (it has no `origin` command)"]
    assert error.diagnosis["origin"] == [] and error.cause == "target-out-of-range"
    assert error.diagnosis["values"]["dataset_indices"] == [3]


@pytest.mark.parametrize(
    "body,note",
    [
        ("time.sleep(30)", "`assertscope origin` took over 0.5 s"),
        ("sys.stderr.write('error: source changed\\n'); sys.exit(3)", "`assertscope origin` failed (exit 3): error: source changed"),
        ("print('not json')", "`assertscope origin` answered something unreadable"),
    ],
    ids=["slow", "failing", "unreadable"],
)
def test_a_slow_failing_or_unreadable_engine_gives_one_note(tmp_path, monkeypatch, body, note):
    monkeypatch.setattr(engine, "TIMEOUT_SECONDS", 0.5)
    error, _ = fail_in(tmp_path, monkeypatch, stand_in(tmp_path, body))
    (written,) = origin_notes(error.diagnosis)
    assert written.startswith(f"the origin path is not drawn: {note}"), written
    assert error.diagnosis["origin"] == []


def test_a_missing_binary_gives_one_note(tmp_path, monkeypatch):
    missing = tmp_path / "nowhere" / "assertscope"
    error, _ = fail_in(tmp_path, monkeypatch, missing)
    (note,) = origin_notes(error.diagnosis)
    assert note.startswith(f"the origin path is not drawn: {missing} cannot be run"), note


def test_under_run_the_guard_does_not_call_the_binary(tmp_path, monkeypatch):
    binary = stand_in(tmp_path, "print('{}')")
    reports = tmp_path / "reports"
    reports.mkdir()
    script = tmp_path / "train.py"
    script.write_text(BAD_LABEL)
    monkeypatch.setenv("ASSERTSCOPE_REPORT_DIR", str(reports))
    monkeypatch.setenv("ASSERTSCOPE_BIN", str(binary))
    import runpy

    with pytest.raises(GuardError) as caught:
        with assertscope.guard(mode="sync"):
            runpy.run_path(str(script), run_name="__main__")
    assert not (tmp_path / "request.json").exists()
    assert origin_notes(caught.value.diagnosis) == []
    (report,) = reports.glob("guard-*.json")
    assert json.loads(report.read_text())["runtime"]["dataset"]["indices"] == [3]


def test_run_tells_its_child_where_the_binary_is(tmp_path):
    binary = assertscope_binary()
    done = subprocess.run(
        [binary, "run", "--", sys.executable, "-c", "import os; print(os.environ['ASSERTSCOPE_BIN'])"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert os.path.samefile(done.stdout.strip(), binary)


def _has_origin_command():
    binary = assertscope_binary()
    return subprocess.run([binary, "origin", "--help"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _has_origin_command(), reason="this assertscope binary has no `origin` command yet (the engine is not built in)")
def test_end_to_end_the_real_engine_draws_the_path_to_the_lookup_with_a_default(tmp_path, monkeypatch):
    error, script = fail_in(tmp_path, monkeypatch, Path(assertscope_binary()).resolve())
    diagnosis = error.diagnosis
    assert diagnosis["dataset_indices"] == [3]
    # The value's trail ends at the lookup; the head's size (3 classes) is a trail of its own.
    steps = [step for step in diagnosis["origin"] if step["chain"] == "value"]
    assert steps and steps[-1]["role"] == "made", steps
    assert steps[-1]["line"] == 11 and "get" in steps[-1]["note"], steps[-1]
    assert all(step["role"] != "made" for step in steps[:-1])
    assert not any(step["line"] == 23 and step["role"] == "made" for step in diagnosis["origin"])
    assert f"{len(steps)}. made here: " in str(error)
