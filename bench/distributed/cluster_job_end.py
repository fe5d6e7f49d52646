#!/usr/bin/env python3
"""How long a job that outgrew one machine runs on after its bad step, with and without
`assertscope run`, measured in one run and given as ratios (run / plain):

- ray: examples/ray_labels.py (TorchTrainer, 2 workers, gloo on the CPU, a bad label at
  index 77 of rank 1's shard) on a Ray cluster started separately (`ray start --head`,
  tests/python/ray_cluster.py). The bad step's time is when the worker's training function
  raised, from Ray Train's own log of the worker (`session_*/logs/train/…`, timestamp_ns);
  the job ends when the driver exits.
- torchrun: two node ranks on this machine (`torchrun --nnodes 2 --node_rank N`), each
  under its own `run --report-dir SHARED` (plainly, without), rank 1 failing at step 3
  (bench/distributed/hung_rank.py with KEEP_ALIVE=0: it exits, as most failing ranks do).
  The bad step's time is printed by the rank; the job ends when the last node's torchrun exits.

    python3 bench/distributed/cluster_job_end.py [--jobs ray torchrun] [--rounds 2] [--bin BIN]
"""

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "python"))
from ray_cluster import RayCluster  # noqa: E402

PYTHON = REPO / ".venv" / "bin" / "python"


def ray_error_time(logs, after):
    """When a Ray Train worker's training function raised (after `after`), from Ray Train's log."""
    times = []
    for path in (logs / "train").glob("ray-train-app-worker-*.log"):
        for line in path.read_text(errors="replace").splitlines():
            if "Error in training function" in line:
                stamp = json.loads(line)["timestamp_ns"] / 1e9
                if stamp >= after:
                    times.append(stamp)
    return min(times) if times else None


def ray_round(cluster, wrap, tmp):
    env = cluster.job_env(EPOCHS="1", BAD_RANK="1", STORAGE_PATH=str(tmp))
    start = time.time()
    proc = subprocess.run([*wrap, str(PYTHON), str(REPO / "examples" / "ray_labels.py")], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, env=env, cwd=REPO, timeout=900)
    end = time.time()
    failed_at = ray_error_time(cluster.session_logs(), start)
    if failed_at is None:
        raise RuntimeError("no worker error in Ray Train's logs:\n" + proc.stdout.decode(errors="replace")[-3000:])
    return end - failed_at, proc.returncode


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun_round(binary, guarded, tmp):
    port = free_port()
    shared = Path(tmp) / "shared"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "BAD_RANK": "1", "BAD_STEP": "3", "KEEP_ALIVE": "0",
           "PG_TIMEOUT_S": "120", "PYTHONUNBUFFERED": "1"}
    torchrun = PYTHON.with_name("torchrun")
    procs = []
    for node in (0, 1):
        job = [str(torchrun), "--nnodes", "2", "--node_rank", str(node), "--rdzv_endpoint", f"localhost:{port}",
               "--rdzv_id", f"bench{port}", "--nproc_per_node", "1", str(REPO / "bench" / "distributed" / "hung_rank.py")]
        if guarded:
            job = [binary, "run", "--no-pty", "--report-dir", str(shared), "--", *job]
        procs.append(subprocess.Popen(job, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=REPO))
    outs = [p.communicate(timeout=900)[0].decode(errors="replace") for p in procs]
    end = time.time()
    m = re.search(r"bad batch at step \d+ at (\d+\.\d+)", "".join(outs))
    if not m:
        raise RuntimeError("the bad rank never said when it failed:\n" + outs[1][-3000:])
    return end - float(m.group(1)), [p.returncode for p in procs]


def measure(name, one_round, rounds):
    times = {"plain": [], "run": []}
    for _ in range(rounds):
        for mode in ("plain", "run"):  # alternated, so load changes hit both alike
            with tempfile.TemporaryDirectory() as tmp:
                seconds, code = one_round(mode == "run", tmp)
            times[mode].append(seconds)
            print(f"  {name} {mode}: {seconds:.1f} s from the bad step to the end (exit {code})", flush=True)
    plain, run = (min(times[m]) for m in ("plain", "run"))
    print(f"{name}: plain {plain:.1f} s, under assertscope run {run:.1f} s: ratio run/plain {run / plain:.2f} "
          f"(best of {rounds})", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", nargs="+", default=["ray", "torchrun"], choices=["ray", "torchrun"])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "assertscope"))
    args = ap.parse_args()
    if not Path(args.bin).exists():
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
    if "torchrun" in args.jobs:
        measure("torchrun, 2 node ranks", lambda guarded, tmp: torchrun_round(args.bin, guarded, tmp), args.rounds)
    if "ray" in args.jobs:
        with RayCluster(PYTHON) as cluster:
            wrap = {False: [], True: [args.bin, "run", "--no-pty", "--"]}
            measure("ray, TorchTrainer 2 workers", lambda guarded, tmp: ray_round(cluster, wrap[guarded], tmp),
                    args.rounds)


if __name__ == "__main__":
    main()
