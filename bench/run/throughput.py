#!/usr/bin/env python3
"""Output throughput through `assertscope run`: a job writing SIZE bytes of log lines,
timed plainly and under `run`, piped to a consumer (`cat`) and redirected to a file,
interleaved in one run. Target: run >= 0.8x plain throughput, run's RSS <= 64 MB.

    python3 bench/run/throughput.py [--size-mib 1024] [--runs 3] [--bin target/release/assertscope] [--floor]

The ratio is plain time / run time (1.0 = no slower). With --floor, the job piped to
`cat | cat` is timed as well: the cost of one more pipe hop, which any program in between
(run included) pays at the least. RSS is the peak resident set of the
assertscope process itself (from /proc/PID/status VmHWM, sampled every 20 ms while it runs).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# One MiB of realistic training-log lines, written again and again.
PRODUCER = r"""
import os, sys
size = int(sys.argv[1])
line = b"[rank0]: epoch 3 step 12345 | loss 0.4821 | lr 3.0e-04 | grad_norm 1.234 | 812.4 samples/s\n"
block = line * ((1 << 20) // len(line))
written = 0
while written < size:
    chunk = block[: size - written]
    os.write(1, chunk)
    written += len(chunk)
"""


def timed(cmd, stdout):
    """Wall time from start to exit, taken when the process is reaped (not at a polling
    tick: at 1 GiB to a file a run lasts about 0.4 s), and the peak RSS sampled meanwhile."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.DEVNULL)
    peak = [0]
    done = threading.Event()

    def sample():
        status = Path(f"/proc/{proc.pid}/status")
        while not done.is_set():
            try:
                for field in status.read_text().splitlines():
                    if field.startswith("VmHWM:"):
                        peak[0] = max(peak[0], int(field.split()[1]))
            except OSError:
                pass
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    proc.wait()
    elapsed = time.perf_counter() - start
    done.set()
    sampler.join()
    if proc.returncode != 0:
        sys.exit(f"{cmd} failed with status {proc.returncode}")
    return elapsed, peak[0]


def to_consumer(cmd):
    consumer = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    result = timed(cmd, consumer.stdin)
    consumer.stdin.close()
    consumer.wait()
    return result


def through_a_second_cat(cmd):
    consumer = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    hop = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=consumer.stdin)
    consumer.stdin.close()
    result = timed(cmd, hop.stdin)
    hop.stdin.close()
    hop.wait()
    consumer.wait()
    return result


def to_file(cmd, path):
    with open(path, "wb") as f:
        result = timed(cmd, f)
    size = os.path.getsize(path)
    os.unlink(path)
    return result, size


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "assertscope"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--floor", action="store_true", help="also time the job piped to cat | cat")
    args = ap.parse_args()
    if not Path(args.bin).exists():
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
    size = args.size_mib << 20
    plain_cmd = [args.python, "-c", PRODUCER, str(size)]
    run_cmd = [args.bin, "run", "--no-pty", "--guard", "off", "--", *plain_cmd]
    out = Path(tempfile.mkdtemp()) / "out.log"
    for label, measure in [("piped to cat", to_consumer), ("to a file", lambda c: to_file(c, out)[0])]:
        plain, under_run, rss, hop = [], [], [], []
        for _ in range(args.runs):
            plain.append(measure(plain_cmd)[0])
            t, peak = measure(run_cmd)
            under_run.append(t)
            rss.append(peak)
            if args.floor and measure is to_consumer:
                hop.append(through_a_second_cat(plain_cmd)[0])
        p, r = statistics.median(plain), statistics.median(under_run)
        print(f"{args.size_mib} MiB {label}: plain {p:.2f} s ({args.size_mib / p:.0f} MiB/s), "
              f"under run {r:.2f} s ({args.size_mib / r:.0f} MiB/s), throughput ratio {p / r:.2f}x "
              f"(target >= 0.8x); run peak RSS {max(rss) / 1024:.1f} MB (target <= 64 MB)")
        if hop:
            h = statistics.median(hop)
            print(f"{args.size_mib} MiB piped to cat | cat (one more pipe hop, no run): {h:.2f} s, "
                  f"ratio {p / h:.2f}x")


if __name__ == "__main__":
    main()
