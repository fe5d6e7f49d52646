#!/usr/bin/env python3
"""What `assertscope run` adds to process start: the same short command started plainly
and under `run`, interleaved, in one run. Target: <= 50 ms added.

    python3 bench/run/startup.py [--runs 30] [--bin target/release/assertscope] [--python PY]

Two commands: `python -c pass` (the injected start-up hook, no torch) and
`python -c "import torch"` (the hook arms the guard when torch is imported).
"""

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def wall(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "assertscope"))
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    if not Path(args.bin).exists():
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
    for label, code in [("python -c pass", "pass"), ("python -c 'import torch'", "import torch")]:
        plain_cmd = [args.python, "-c", code]
        run_cmd = [args.bin, "run", "--no-pty", "--", args.python, "-c", code]
        wall(plain_cmd), wall(run_cmd)  # warm caches
        plain, under_run = [], []
        for _ in range(args.runs):
            plain.append(wall(plain_cmd))
            under_run.append(wall(run_cmd))
        p, r = statistics.median(plain), statistics.median(under_run)
        print(f"{label}: plain {p * 1000:.1f} ms, under assertscope run {r * 1000:.1f} ms, "
              f"added {(r - p) * 1000:.1f} ms ({r / p:.2f}x) (target <= 50 ms added)")


if __name__ == "__main__":
    main()
