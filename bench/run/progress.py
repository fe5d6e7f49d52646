#!/usr/bin/env python3
"""Progress bars through `assertscope run` on a terminal: a job writing N carriage-return
updates (`\\r step i`, flushed one by one, as tqdm does) to a pseudo-terminal, plainly and
under `run`, interleaved in one run. The reader is `cat`, reading the terminal as fast as
a program can. Target: run >= 0.8x plain throughput, and the job itself no
slower (its own time for its loop).

    python3 bench/run/progress.py [--updates 1000000] [--runs 3] [--bin target/release/assertscope]

Two ratios, plain / run (1.0 = no slower): the whole (start to the last byte shown) and
the job's own loop, which it times itself and reports on stderr. And CPU times, which a
busy machine's scheduling blurs less than wall times: the job's own (it reports them),
and `run`'s (its children's usage at its end, less the job's).
"""

import argparse
import os
import pty
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

JOB = r"""
import resource, sys, time
n = int(sys.argv[1])
write, flush = sys.stdout.write, sys.stdout.flush
start = time.perf_counter()
for i in range(n):
    write(f"\rstep {i}")
    flush()
write("\n")
flush()
own = resource.getrusage(resource.RUSAGE_SELF)
print(f"job {time.perf_counter() - start:.4f} {own.ru_utime + own.ru_stime:.4f}", file=sys.stderr)
"""


def timed(cmd, shown_to):
    """Wall time until the terminal is closed by every writer, the job's own time, and
    the number of bytes the terminal showed. The terminal is read by `cat`, as fast as a
    program can read it (a reader in Python falls behind the job and slows it down)."""
    master, slave = pty.openpty()
    err_r, err_w = os.pipe()
    with open(shown_to, "wb") as shown:
        start = time.perf_counter()
        reader = subprocess.Popen(["cat"], stdin=master, stdout=shown, stderr=subprocess.DEVNULL)
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=slave, stderr=err_w)
        os.close(slave)
        os.close(err_w)
        os.close(master)
        reader.wait()  # ends when every writer has closed the terminal (EIO)
        elapsed = time.perf_counter() - start
    _, _, usage = os.wait4(proc.pid, 0)
    cpu = usage.ru_utime + usage.ru_stime
    err = os.read(err_r, 1 << 16).decode()
    os.close(err_r)
    job, job_cpu = (float(w) for w in next(line.split()[1:] for line in err.splitlines() if line.startswith("job ")))
    return elapsed, job, os.path.getsize(shown_to), cpu - job_cpu, job_cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--updates", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "assertscope"))
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    if not Path(args.bin).exists():
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
    plain_cmd = [args.python, "-c", JOB, str(args.updates)]
    run_cmd = [args.bin, "run", "--guard", "off", "--", *plain_cmd]
    plain, under_run = [], []
    shown = Path(tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None)) / "shown"
    for _ in range(args.runs):
        plain.append(timed(plain_cmd, shown))
        under_run.append(timed(run_cmd, shown))
    shown.unlink()
    shown.parent.rmdir()
    assert {x[2] for x in plain} == {x[2] for x in under_run}, "the terminals showed different output"
    p, pj, pjc = (statistics.median(x[i] for x in plain) for i in (0, 1, 4))
    r, rj, rc, rjc = (statistics.median(x[i] for x in under_run) for i in (0, 1, 3, 4))
    print(f"{args.updates} progress updates on a terminal: plain {p:.2f} s, under run {r:.2f} s, "
          f"throughput ratio {p / r:.2f}x (target >= 0.8x); the job's own loop: plain {pj:.2f} s, "
          f"under run {rj:.2f} s, ratio {pj / rj:.2f}x; CPU: the job plain {pjc:.2f} s, under run {rjc:.2f} s, "
          f"run itself {rc:.2f} s")


if __name__ == "__main__":
    main()
