"""The origin on the binary's side: `explain` reads the user's source when it is at hand,
names the asserting op's call before the line where an asynchronous error surfaced and traces
the bad value back from it; `run` never places the user's line inside assertscope's own
injected package; the origin reaches `run --json`."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import assertscope_binary

ASSERT = (
    "/pytorch/aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], "
    "thread: [{t},0,0] Assertion `t >= 0 && t < n_classes` failed.\n"
)

TRAIN = textwrap.dedent(
    """\
    import torch
    import torch.nn as nn


    def main(loader, model, device):
        criterion = nn.CrossEntropyLoss()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(3):
            total = 0.0
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                loss = criterion(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += loss.item()
            print(epoch, total)
    """
)


def gpu_log(script, line, code):
    return (
        "".join(ASSERT.format(t=t) for t in (3, 9))
        + "Traceback (most recent call last):\n"
        + f'  File "{script}", line {line}, in main\n'
        + f"    {code}\n"
        + "RuntimeError: CUDA error: device-side assert triggered\n"
        + "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
        + "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    )


def explain_json(cwd, log):
    path = cwd / "train.log"
    path.write_text(log)
    done = subprocess.run([assertscope_binary(), "explain", "--json", str(path)], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["diagnoses"][0]


def test_explain_names_the_loss_call_before_the_surfacing_line_when_the_source_is_at_hand(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    diagnosis = explain_json(tmp_path, gpu_log("train.py", 16, "total += loss.item()"))
    assert diagnosis["location"]["line"] == 16
    assert diagnosis["origin"][0] == {
        "file": "train.py",
        "line": 12,
        "function": "main",
        "code": "loss = criterion(model(x), y)",
        "role": "call",
        "chain": None,
        "note": "the nll_loss call that ran before the line where the error surfaced",
        "confirmed": False,
    }
    # From that call, the target's path back: moved to the device, unpacked from the loader,
    # which is a parameter of `main` that nothing in the file calls: the trail ends there.
    assert [(o["line"], o["role"]) for o in diagnosis["origin"][1:]] == [(11, "move"), (10, "unpack")]
    assert diagnosis["origin_end"]["line"] == 5
    assert "`loader` is a parameter of `main`" in diagnosis["origin_end"]["note"]
    human = subprocess.run(
        [assertscope_binary(), "explain", str(tmp_path / "train.log")], cwd=tmp_path, capture_output=True, text=True
    ).stdout
    # Both spans are in train.py, so they share one snippet: the origin line first, with its label.
    assert "12 |             loss = criterion(model(x), y)\n" in human
    assert "- the nll_loss call that ran before the line where the error surfaced\n" in human
    assert human.index("12 |") < human.index("16 |             total += loss.item()")


def test_a_surfacing_line_at_the_top_of_a_loop_finds_the_call_further_down_the_loop(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    diagnosis = explain_json(tmp_path, gpu_log("train.py", 11, "x, y = x.to(device), y.to(device)"))
    assert [(o["line"], o["role"]) for o in diagnosis["origin"]][:1] == [(12, "call")]


def test_without_the_source_the_diagnosis_carries_an_empty_origin(tmp_path):
    diagnosis = explain_json(tmp_path, gpu_log("train.py", 16, "total += loss.item()"))
    assert diagnosis["origin"] == []
    assert diagnosis["location"]["line"] == 16


def test_a_host_error_raised_inside_the_guard_wrapper_is_located_on_the_users_line(tmp_path):
    script = tmp_path / "lookup.py"
    script.write_text(
        textwrap.dedent(
            """\
            import torch

            table = torch.nn.Embedding(10, 4)
            ids = torch.tensor([1.0, 2.0])
            vectors = table(ids)
            """
        )
    )
    done = subprocess.run(
        [assertscope_binary(), "run", "--json", "--", sys.executable, "lookup.py"], cwd=tmp_path, capture_output=True, text=True
    )
    location = json.loads(done.stdout)["diagnoses"][0]["location"]
    assert (Path(location["file"]).name, location["line"]) == ("lookup.py", 5), location
    assert "assertscope" not in location["file"]


HEAD = textwrap.dedent(
    """\
    import torch

    labels = torch.tensor([0, 1, 2, 3])
    head = torch.nn.Linear(6, 3)
    loss = torch.nn.functional.cross_entropy(head(torch.randn(4, 6)), labels)
    """
)


def test_run_keeps_the_guards_runtime_facts_in_its_report(tmp_path):
    (tmp_path / "head.py").write_text(HEAD)
    done = subprocess.run(
        [assertscope_binary(), "run", "--json", "--report-dir", "reports", "--", sys.executable, "head.py"],
        cwd=tmp_path, capture_output=True, text=True,
    )
    assert json.loads(done.stdout)["diagnoses"][0]["location"]["line"] == 5
    (report,) = (tmp_path / "reports").glob("guard-*.json")
    runtime = json.loads(report.read_text())["runtime"]
    (head,) = runtime["modules"]
    assert (head["size_argument"], head["size"], head["need"]) == ("out_features", 3, 4)
    assert head["sites"] == [{"file": str(tmp_path / "head.py"), "line": 4, "function": "<module>"}]
    assert runtime["frames"][0]["holders"] == ["labels"]


def _has_origin_command():
    return subprocess.run([assertscope_binary(), "origin", "--help"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _has_origin_command(), reason="this assertscope binary has no `origin` command yet (the engine is not built in)")
def test_run_reports_the_path_the_engine_proved_from_the_guards_facts(tmp_path):
    (tmp_path / "head.py").write_text(HEAD)
    done = subprocess.run(
        [assertscope_binary(), "run", "--json", "--", sys.executable, "head.py"], cwd=tmp_path, capture_output=True, text=True
    )
    diagnosis = json.loads(done.stdout)["diagnoses"][0]
    assert diagnosis["location"]["line"] == 5
    # The label 3 was made by the literal on line 3; the head, built for 3 classes on line 4,
    # is the size it broke.
    steps = [(o["line"], o["role"], o["chain"]) for o in diagnosis["origin"]]
    assert steps == [(3, "made", "value"), (4, "sized", "size")], diagnosis["origin"]
