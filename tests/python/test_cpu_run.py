"""`assertscope run --cpu -- python script.py`: unmodified CUDA training scripts (optimizers,
AMP, the torch.cuda runtime calls, pinned memory) run on a machine without a GPU, through the
real binary, and a bad label in them is still diagnosed."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import assertscope_binary

pytest.importorskip("torch")

SCRIPTS = Path(__file__).resolve().parent / "scripts"


def run_cpu(*args, json_report=False, environment=None):
    # A generous --grace: on a loaded machine a failed process may take longer than the default
    # to print its traceback and exit, and being stopped would change the exit status.
    options = ["--cpu", "--grace", "300", *(["--json"] if json_report else [])]
    command = [assertscope_binary(), "run", *options, "--", sys.executable, *args]
    # CUDA_VISIBLE_DEVICES="" makes a GPU machine behave like the machines --cpu is for.
    env = {**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    # Importing lightning (test_libraries.py) sets this in the test process: each test says.
    env.pop("PYTORCH_NVML_BASED_CUDA_CHECK", None)
    env.update(environment or {})
    return subprocess.run(command, cwd=SCRIPTS, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=600)


# Every optimizer family once, each AMP flavour at least twice, the fused and foreach kernels,
# all in one process (starting Python with torch dominates the time).
TRAINING_CASES = [
    ("adam", "none"),
    ("adamw", "autocast"),
    ("adam-fused", "cuda-amp"),
    ("adamw-fused", "bf16"),
    ("adamw-foreach", "autocast"),
    ("adam-capturable", "none"),
    ("sgd", "cuda-amp"),
    ("sgd-fused", "autocast"),
    ("rmsprop", "bf16"),
    ("nadam", "none"),
    ("radam", "none"),
    ("adagrad", "autocast"),
]


def test_cuda_training_loops_run_on_the_cpu():
    proc = run_cpu("cuda_optimizers.py", *(f"{optimizer}:{amp}" for optimizer, amp in TRAINING_CASES))
    stderr = proc.stderr.decode()
    assert proc.returncode == 0, stderr[-3000:]
    finished = [line for line in proc.stdout.decode().splitlines() if line.startswith("ok ")]
    assert finished == [f"ok {optimizer} {amp} cpu" for optimizer, amp in TRAINING_CASES]
    assert "CUDA driver" not in stderr and "NVIDIA driver" not in stderr


def test_cuda_runtime_calls_answer_on_the_cpu():
    proc = run_cpu("cuda_runtime_calls.py")
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    out = proc.stdout.decode().splitlines()
    assert out[0] == "gpu CPU (assertscope --cpu) (0, 0) True True"
    assert out[1] == "memory 0 0 0 0 True"
    assert out[-1] == "ok True cpu cpu 0"


def test_a_bad_label_after_the_first_adamw_step_is_diagnosed():
    # Row 20 is in the second batch: the first AdamW step must run for the guard to see it.
    proc = run_cpu("cuda_optimizers.py", "--bad-label-at", "20", "adamw:autocast", json_report=True)
    assert proc.returncode == 1, proc.stderr.decode()[-3000:]
    root = json.loads(proc.stdout)["diagnoses"][0]
    assert (root["cause"], root["op"]) == ("target-out-of-range", "cross_entropy")
    assert root["location"]["code"].strip() == "loss = F.cross_entropy(logits.view(-1, 32), target.view(-1))"
    assert (root["values"]["bound"], root["values"]["max"], root["values"]["bad_count"]) == (32, 37, 1)
    assert b"step 0 " in proc.stderr and b"step 1 " not in proc.stderr


@pytest.mark.parametrize("nvml_check", ["", "1"], ids=["default", "nvml-based-cuda-check"])
def test_a_compiled_cuda_script_runs_on_the_cpu_and_its_bad_id_is_diagnosed(nvml_check):
    # torch.compile must see the truth (no CUDA, so no Triton) while the script sees a GPU;
    # with PYTORCH_NVML_BASED_CUDA_CHECK=1 (set by lightning) torch asks device_count() instead.
    environment = {"PYTORCH_NVML_BASED_CUDA_CHECK": nvml_check} if nvml_check else {}
    proc = run_cpu("compiled_tagger.py", "bad-id", json_report=True, environment=environment)
    assert proc.returncode == 1, proc.stderr.decode()[-3000:]
    root = json.loads(proc.stdout)["diagnoses"][0]
    assert (root["cause"], root["op"]) == ("embedding-index-out-of-range", "embedding")
    assert (root["location"]["file"], root["location"]["function"]) == ("compiled_tagger.py", "forward")
    assert (root["values"]["max"], root["values"]["bound"]) == (54, 50)
    assert b"step 1 " in proc.stderr and b"libcuda" not in proc.stderr


def test_the_cpu_answers_as_a_device_without_compute_capability_or_tensor_cores():
    # Lightning's CUDA accelerator printed "You are using a CUDA device ('CPU (assertscope
    # --cpu)') that has Tensor Cores" when the CPU claimed capability 8.0.
    code = (
        "import assertscope; assertscope.on_cpu(); import torch\n"
        "from lightning.fabric.accelerators.cuda import _is_ampere_or_later\n"
        "p = torch.cuda.get_device_properties(0)\n"
        "print(torch.cuda.get_device_capability(), (p.major, p.minor), torch.cuda.get_arch_list(),"
        " torch.cuda.is_tf32_supported(), _is_ampere_or_later())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[0] == "(0, 0) (0, 0) [] False False", out.stdout
