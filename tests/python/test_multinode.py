"""A multi-node torchrun job, simulated with two node ranks on this machine: each node runs
`assertscope run --report-dir SHARED -- torchrun --nnodes 2 --node_rank N …`, gloo on the
CPU, and rank 1 (on node 1) meets a label past the last class. Both nodes' `run`s share the
run id torchrun's `--rdzv_id` gives them, so each sees the other's reports: node 0's
diagnosis, where rank 0 only waited, names rank 1 as the cause; `explain SHARED` says the
same from the directory alone."""

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


def two_nodes(shared, *, rdzv_id="job7"):
    """Runs node 0 and node 1 of the job, each under its own `run`; returns both processes."""
    torchrun = Path(sys.executable).with_name("torchrun")
    port = free_port()
    env = {**os.environ, "OMP_NUM_THREADS": "1", "BAD_RANK": "1", "BAD_STEP": "3"}
    env.pop("ASSERTSCOPE_RUN_ID", None)
    procs = []
    for node in (0, 1):
        cmd = [assertscope_binary(), "run", "--json", "--no-pty", "--report-dir", str(shared), "--",
               str(torchrun), "--nnodes", "2", "--node_rank", str(node), "--rdzv_endpoint", f"localhost:{port}",
               "--rdzv_id", rdzv_id, "--nproc_per_node", "1", str(DDP)]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO))
    outs = [p.communicate(timeout=300) for p in procs]
    return [(p.returncode, json.loads(out) if out else None, err.decode(errors="replace")) for p, (out, err) in zip(procs, outs)]


def check_root_and_waits(report, context):
    root = report["diagnoses"][0]
    assert (root["cause"], root["rank"]) == ("target-out-of-range", 1), context
    waited = [s for s in report["secondary"] if s["cause"] == "distributed-peer-failure"]
    assert any("rank 0" in s["text"] for s in waited), (report["secondary"], context)
    assert any(e["kind"] == "node" and e["text"].startswith("rank 1 ran on node ") for e in root["evidence"]), root


def test_the_first_failing_rank_across_nodes(tmp_path):
    shared = tmp_path / "shared"
    (code0, report0, err0), (code1, report1, err1) = two_nodes(shared)
    assert code0 != 0 and code1 != 0
    names = sorted(p.name for p in shared.iterdir())
    # One guard report (rank 1's), tagged with the run id both nodes took from --rdzv_id.
    assert [n for n in names if n.startswith("guard-")] and all(n.startswith("guard-rdzv_job7-") for n in names
                                                               if n.startswith("guard-")), names
    assert len([n for n in names if n.startswith("output-")]) == 2, names
    # Node 0 only waited: its own `run` names rank 1, on the other node, as the cause.
    check_root_and_waits(report0, err0[-4000:])
    assert report1["diagnoses"][0]["rank"] == 1
    # And `explain` over the shared directory, after the job.
    out = subprocess.run([assertscope_binary(), "explain", "--json", str(shared)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, timeout=60)
    assert out.returncode == 0, out.stderr.decode()
    check_root_and_waits(json.loads(out.stdout), names)
