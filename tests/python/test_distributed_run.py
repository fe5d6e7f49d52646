"""Many processes under `assertscope run`: the rank that failed is named, not the ranks
that waited; per-process guard reports of a multi-node job merge under `explain DIR`."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import assertscope_binary

pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]
DDP = REPO / "examples" / "ddp_labels.py"




def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_four_rank_torchrun_names_rank_three(tmp_path):
    torchrun = Path(sys.executable).with_name("torchrun")
    proc = subprocess.run(
        [assertscope_binary(), "run", "--json", "--", str(torchrun), "--standalone", "--nproc_per_node=4", str(DDP)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600,
        env={**os.environ, "OMP_NUM_THREADS": "1", "BAD_RANK": "3", "BAD_STEP": "2"},
    )
    assert proc.returncode != 0
    report = json.loads(proc.stdout)
    root = report["diagnoses"][0]
    assert (root["cause"], root["rank"], root["op"]) == ("target-out-of-range", 3, "cross_entropy"), proc.stderr.decode()[-3000:]
    assert "max=10" in " ".join(e["text"] for e in root["evidence"])


def test_one_run_per_process_then_explain_the_report_dir(tmp_path):
    """The multi-node pattern: `srun assertscope run --report-dir DIR -- python train.py`
    on every node (here two processes on one machine, with the variables srun sets), then
    `assertscope explain DIR`."""
    reports = tmp_path / "reports"
    port = str(free_port())
    procs = []
    for rank in (0, 1):
        env = {**os.environ, "OMP_NUM_THREADS": "1", "RANK": str(rank), "SLURM_PROCID": str(rank), "LOCAL_RANK": "0",
               "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port, "BAD_RANK": "1", "BAD_STEP": "3"}
        procs.append(subprocess.Popen([assertscope_binary(), "run", "--no-pty", "--grace", "5", "--report-dir", str(reports), "--",
                                       sys.executable, str(DDP)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env))
    for p in procs:
        p.communicate(timeout=300)
    assert all(p.returncode != 0 for p in procs)
    names = sorted(p.name for p in reports.iterdir())
    assert any(n.startswith("guard-") for n in names), names
    assert any(n.startswith("output-rank0-") for n in names) and any(n.startswith("output-rank1-") for n in names), names
    out = subprocess.run([assertscope_binary(), "explain", "--json", str(reports)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         timeout=60)
    assert out.returncode == 0, out.stderr.decode()
    report = json.loads(out.stdout)
    root = report["diagnoses"][0]
    assert (root["cause"], root["rank"]) == ("target-out-of-range", 1)
    assert any(s["cause"] == "distributed-peer-failure" and "rank 0" in s["text"] for s in report["secondary"]), report
