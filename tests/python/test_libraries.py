"""`assertscope run` around the training libraries people use, installed for real: a
Hugging Face Trainer, a Lightning Trainer.fit and `accelerate launch` with 2 CPU
processes on the CPU. Each model is tiny and built from its config in the script (no download)."""

import importlib.util
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import assertscope_binary

import accelerate  # noqa: F401  (tests/requirements.txt installs the three libraries)
import lightning  # noqa: F401
import transformers  # noqa: F401

SCRIPTS = Path(__file__).resolve().parent / "scripts" / "libraries"
DATASET = SCRIPTS / "reviews.py"  # the dataset both Trainer scripts train on, with the bad values planted
ENV = {"OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}


def run(args, tmp_path, guarded=True):
    argv = [assertscope_binary(), "run", *args] if guarded else args
    env = {**os.environ, **ENV, "ASSERTSCOPE_TMPDIR": str(tmp_path)}
    return subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)


def line_of(path, needle):
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        if needle in line:
            return n
    raise AssertionError(f"{needle!r} not in {path}")


def planted():
    """The dataset indices reviews.py plants its bad values at, read from the module itself."""
    spec = importlib.util.spec_from_file_location("reviews", DATASET)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {"bad-label": module.BAD_LABEL_INDEX, "bad-token": module.BAD_TOKEN_INDEX}


# The line of __getitem__ that hands out each bad value: the dataset line the user must see.
DATASET_LINE = {"bad-label": "label = self.labels[i]", "bad-token": 'return {"input_ids": self.ids[i]'}

# (script, mode, cause, op, the user's line it names, the bad value in what was found)
BAD_DATA = [
    ("hf_trainer.py", "bad-label", "target-out-of-range", "cross_entropy", "trainer.train()", "3 at ["),
    ("hf_trainer.py", "bad-token", "embedding-index-out-of-range", "embedding", "trainer.train()", "50"),
    ("lightning_fit.py", "bad-label", "target-out-of-range", "cross_entropy", "return torch.nn.functional.cross_entropy", "3 at ["),
    ("lightning_fit.py", "bad-token", "embedding-index-out-of-range", "embedding", "logits = self.head(self.tok(", "50"),
]


@pytest.mark.parametrize("script,mode,cause,op,line_text,value", BAD_DATA, ids=[f"{s[:-3]}-{m}" for s, m, *_ in BAD_DATA])
def test_bad_data_in_the_dataset_is_caught_at_the_op_with_the_users_line_and_dataset_index(tmp_path, script, mode, cause, op, line_text, value):
    # A generous --grace: the failing process itself may take seconds to unwind on a loaded machine.
    proc = run(["--json", "--grace", "60", "--report-dir", str(tmp_path / "reports"), "--",
                sys.executable, str(SCRIPTS / script), str(tmp_path / "out"), mode], tmp_path)
    assert proc.returncode == 1, proc.stderr[-3000:]
    root = json.loads(proc.stdout)["diagnoses"][0]
    assert (root["cause"], root["op"]) == (cause, op), root
    assert os.path.samefile(root["location"]["file"], SCRIPTS / script), root["location"]
    assert root["location"]["line"] == line_of(SCRIPTS / script, line_text), root["location"]
    found = next(e["text"] for e in root["evidence"] if e["kind"] == "guard")
    assert value in found, found
    assert "GuardError" in proc.stderr
    # The sample, not only the batch: its dataset index (the Trainer shuffles, and its loader
    # prefetches the next batch) and the line of the user's dataset where the bad value
    # first appeared when that sample was read again, from the guard report's runtime facts.
    index = planted()[mode]
    assert root["values"]["dataset_indices"] == [index], root["values"]
    (report,) = (tmp_path / "reports").glob("guard-*.json")
    runtime = json.loads(report.read_text())["runtime"]
    assert runtime["dataset"]["indices"] == [index]
    assert [(level["class"], level["index"]) for level in runtime["dataset"]["chain"]] == [("Reviews", index)]
    seen = runtime["observed"][0]
    assert os.path.samefile(seen["file"], DATASET), seen
    assert (seen["line"], seen["function"]) == (line_of(DATASET, DATASET_LINE[mode]), "__getitem__"), seen


@pytest.mark.parametrize("script", ["hf_trainer.py", "lightning_fit.py"])
def test_a_clean_run_gives_identical_weights_with_and_without_the_guard(tmp_path, script):
    argv = [sys.executable, str(SCRIPTS / script), str(tmp_path / "out"), "clean"]
    plain = run(argv, tmp_path, guarded=False)
    guarded = run(["--", *argv], tmp_path)
    # Whole stderr on failure: a worker's own error comes well before torchrun's summary.
    assert plain.returncode == 0 and guarded.returncode == 0, (plain.stderr, guarded.stderr)
    checksums = [[line for line in p.stdout.splitlines() if line.startswith("checksum")] for p in (plain, guarded)]
    assert len(checksums[0]) == 1 and checksums[0] == checksums[1], checksums


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def accelerate_launch(mode):
    # `--cpu` alone starts one process (several need mpirun); `--multi_gpu` starts them
    # with torchrun, and the script's Accelerator(cpu=True) joins them over gloo.
    launcher = Path(sys.executable).with_name("accelerate")
    return [str(launcher), "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
            "--main_process_port", free_port(), "--mixed_precision", "no", "--dynamo_backend", "no",
            str(SCRIPTS / "accelerate_loop.py"), mode]


def test_accelerate_launch_with_two_processes_names_the_rank_with_the_bad_label(tmp_path):
    proc = run(["--json", "--grace", "60", "--", *accelerate_launch("bad-label")], tmp_path)
    assert proc.returncode != 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    root = report["diagnoses"][0]
    assert (root["cause"], root["op"]) == ("target-out-of-range", "cross_entropy"), root
    # Batches alternate between the ranks: dataset index 13 is in batch 3, rank 1's.
    assert root["rank"] == 1, root
    assert root["location"]["line"] == line_of(SCRIPTS / "accelerate_loop.py", "loss = torch.nn.functional.cross_entropy")


def test_accelerate_clean_run_is_identical_with_and_without_the_guard(tmp_path):
    plain = run(accelerate_launch("clean"), tmp_path, guarded=False)
    guarded = run(["--", *accelerate_launch("clean")], tmp_path)
    # Whole stderr on failure: a worker's own error comes well before torchrun's summary.
    assert plain.returncode == 0 and guarded.returncode == 0, (plain.stderr, guarded.stderr)
    checksums = [sorted(line for line in p.stdout.splitlines() if "checksum" in line) for p in (plain, guarded)]
    assert len(checksums[0]) == 2 and checksums[0] == checksums[1], checksums
