#!/usr/bin/env python3
"""How long a torchrun job runs on after one rank failed, with and without
`assertscope run`, in one run. The failing rank's process stays alive (hung_rank.py), as
when a rank hangs in teardown, so without assertscope the job ends only when the other
ranks' collective times out (PG_TIMEOUT_S, 60 s here; NCCL's default is 10 to 30 min).

    python3 bench/distributed/job_end.py [--ranks 2 4] [--grace 5] [--timeout 60]
"""

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("hung_rank.py")


def run_job(cmd, env):
    start = time.time()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=900)
    end = time.time()
    out = proc.stdout.decode(errors="replace")
    m = re.search(r"bad batch at step \d+ at (\d+\.\d+)", out)
    failed_at = float(m.group(1)) if m else start
    return end - failed_at, proc.returncode, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--grace", type=float, default=5.0)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "assertscope"))
    args = ap.parse_args()
    if not Path(args.bin).exists():
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
    torchrun = Path(sys.executable).with_name("torchrun")
    for n in args.ranks:
        env = {**os.environ, "OMP_NUM_THREADS": "1", "BAD_RANK": str(n - 1), "BAD_STEP": "3",
               "PG_TIMEOUT_S": str(args.timeout), "PYTHONUNBUFFERED": "1"}
        job = [str(torchrun), "--standalone", f"--nproc_per_node={n}", str(SCRIPT)]
        plain, _, _ = run_job(job, env)
        guarded, code, out = run_job([args.bin, "run", "--no-pty", "--grace", str(args.grace), "--", *job], env)
        named = re.search(rf"= rank: {n - 1}\b", out) is not None
        print(f"{n} ranks: plain torchrun ran {plain:.1f} s after the failure; under assertscope run "
              f"{guarded:.1f} s ({plain / guarded:.1f}x sooner; exit {code}; failing rank named: {named})")


if __name__ == "__main__":
    main()
