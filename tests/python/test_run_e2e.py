"""`assertscope run` end to end: the examples (one realistic training script per classic
bug) under the real binary, a torchrun job, `--cpu`, and bad input."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import assertscope_binary

pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"




def run(args, cwd=REPO, env=None, timeout=600):
    # A private TMPDIR shows whether run leaves anything behind.
    return subprocess.run([assertscope_binary(), "run", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}, timeout=timeout)


def line_of(path, needle):
    for n, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if needle in line:
            return n
    raise AssertionError(f"{needle!r} not in {path}")


EXAMPLE_CASES = [
    ("star_ratings.py", "target-out-of-range", "cross_entropy", "loss = criterion(model(x), y)", "1-based"),
    ("added_tokens.py", "embedding-index-out-of-range", "embedding", "return self.head(self.tok(ids))", "resize_token_embeddings"),
    ("fraud_bce.py", "bce-input-range", "binary_cross_entropy", "loss = criterion(scores", "BCEWithLogitsLoss"),
    ("road_segmentation.py", "target-out-of-range", "cross_entropy", "loss = criterion(logits", "ignore_index=255"),
    ("sample_temperature.py", "invalid-probabilities", "multinomial", "return torch.multinomial", "temperature"),
]


@pytest.mark.parametrize("script,cause,op,line_text,hint", EXAMPLE_CASES, ids=[c[0] for c in EXAMPLE_CASES])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_guard_catches_each_example(tmp_path, script, cause, op, line_text, hint, mode):
    proc = run(["--json", "--guard", mode, "--", sys.executable, str(EXAMPLES / script)],
               env={"ASSERTSCOPE_TMPDIR": str(tmp_path)})
    assert proc.returncode == 1, proc.stderr.decode()[-3000:]
    report = json.loads(proc.stdout)
    root = report["diagnoses"][0]
    assert (root["cause"], root["op"]) == (cause, op)
    assert os.path.samefile(root["location"]["file"], EXAMPLES / script)
    assert root["location"]["line"] == line_of(EXAMPLES / script, line_text)
    assert hint in root["fix"]
    assert any(e["kind"] == "guard" for e in root["evidence"])
    # The command's own output (its traceback) went to stderr, the diagnosis alone to stdout.
    assert b"GuardError" in proc.stderr
    # (torch itself may create its own caches there, such as torchinductor_<user>.)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("assertscope")], "run left files behind"


def test_report_file_leaves_the_output_alone(tmp_path):
    report_path = tmp_path / "diag.json"
    proc = run(["--report", str(report_path), "--", sys.executable, str(EXAMPLES / "star_ratings.py")])
    assert proc.returncode == 1
    assert json.loads(report_path.read_text())["diagnoses"][0]["cause"] == "target-out-of-range"
    assert b"error[target-out-of-range]" in proc.stderr
    assert b"assertscope.diagnosis/1" not in proc.stdout


def test_torchrun_names_the_failing_rank_and_ends_promptly(tmp_path):
    torchrun = Path(sys.executable).with_name("torchrun")
    start = time.monotonic()
    proc = run(["--json", "--", str(torchrun), "--standalone", "--nproc_per_node=2", str(EXAMPLES / "ddp_labels.py")],
               env={"BAD_RANK": "1", "BAD_STEP": "2"})
    elapsed = time.monotonic() - start
    assert proc.returncode != 0
    report = json.loads(proc.stdout)
    root = report["diagnoses"][0]
    assert (root["cause"], root["rank"]) == ("target-out-of-range", 1), proc.stderr.decode()[-4000:]
    assert root["location"]["line"] == line_of(EXAMPLES / "ddp_labels.py", "loss = nn.functional.cross_entropy")
    assert elapsed < 240


def test_cpu_runs_cuda_code_unmodified(tmp_path):
    script = tmp_path / "cuda_only.py"
    script.write_text(textwrap.dedent("""
        import torch, torch.nn as nn
        assert torch.cuda.is_available(), "this script needs a GPU"
        model = nn.Linear(4, 3).cuda()
        x = torch.randn(8, 4, device="cuda")
        y = torch.randint(0, 3, (8,)).to("cuda:0")
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        torch.cuda.synchronize()
        print("ok", loss.device)
        """))
    proc = run(["--cpu", "--", sys.executable, str(script)])
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"ok cpu" in proc.stdout


def test_user_sitecustomize_still_runs(tmp_path):
    (tmp_path / "sitecustomize.py").write_text("import os\nos.environ['USER_SITE_RAN'] = 'yes'\n")
    script = tmp_path / "show.py"
    script.write_text("import os, torch, assertscope\nprint(os.environ.get('USER_SITE_RAN'), assertscope.is_guarded())\n")
    proc = run(["--", sys.executable, str(script)], env={"PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.split() == [b"yes", b"True"]


def test_a_command_that_does_not_exist():
    proc = run(["--", "no-such-trainer", "--epochs", "3"])
    assert proc.returncode == 127
    assert b"no-such-trainer: command not found" in proc.stderr


def test_a_command_that_is_not_python_keeps_its_status():
    proc = run(["--", "sh", "-c", "echo building; exit 3"])
    assert proc.returncode == 3
    assert proc.stdout == b"building\n"
    assert b"exited with status 3" in proc.stderr


def test_a_python_without_torch(tmp_path):
    script = tmp_path / "needs_torch.py"
    script.write_text("import torch\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    bare = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    proc = subprocess.run([assertscope_binary(), "run", "--", str(bare / "bin" / "python"), str(script)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env, timeout=120)
    assert proc.returncode == 1
    assert b"ModuleNotFoundError: No module named 'torch'" in proc.stderr


def test_a_command_killed_by_a_signal():
    proc = run(["--", "sh", "-c", "kill -9 $$"])
    assert proc.returncode == 128 + 9
    assert b"killed by signal 9 (SIGKILL)" in proc.stderr


def test_sigterm_is_forwarded(tmp_path):
    script = tmp_path / "slow.py"
    script.write_text(textwrap.dedent("""
        import signal, sys, time
        def bye(sig, frame):
            print("got SIGTERM", flush=True)
            sys.exit(143)
        signal.signal(signal.SIGTERM, bye)
        print("ready", flush=True)
        time.sleep(60)
        """))
    child = subprocess.Popen([assertscope_binary(), "run", "--guard", "off", "--", sys.executable, str(script)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout.readline() == b"ready\n"
    child.send_signal(signal.SIGTERM)
    out, _ = child.communicate(timeout=30)
    assert child.returncode == 143
    assert b"got SIGTERM" in out


def test_an_assert_the_guard_did_not_see_gets_the_next_step(tmp_path):
    # A custom CUDA extension's assert, reproduced by printing what the GPU prints: no
    # guarded op saw the bad value, so run says which checklist step comes next.
    script = tmp_path / "custom_op.py"
    script.write_text(textwrap.dedent("""
        import sys, torch
        print("ops/csrc/voxelize_cuda.cu:58: scatter_points_kernel: block: [62,0,0], thread: [20,0,0] "
              "Assertion `voxel_idx < num_voxels` failed.", flush=True)
        raise RuntimeError("CUDA error: device-side assert triggered\\n"
                           "CUDA kernel errors might be asynchronously reported at some other API call, "
                           "so the stacktrace below might be incorrect.")
        """))
    proc = run(["--json", "--", sys.executable, str(script)])
    assert proc.returncode == 1
    root = json.loads(proc.stdout)["diagnoses"][0]
    assert root["cause"] == "unknown-device-assert"
    assert "--blocking" in root["fix"] and "--cpu" in root["fix"]
    assert "got past the guard" in root["fix"]
