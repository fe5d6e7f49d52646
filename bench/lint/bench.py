#!/usr/bin/env python3
"""Lines per second of `assertscope lint` against `ruff check`, same files, same run.

    python3 bench/lint/bench.py DIR [DIR...] [--runs 5] [--ruff PATH] [--assertscope PATH]

Both tools get the same explicit list of *.py files under DIR (found here, so neither
tool's own exclusions change what is measured), use every core, and write nothing
but their exit status. ruff runs with --isolated --no-cache (its default rules, no cache
between runs). Each tool runs --runs times, alternating; the median wall time is used.
Prints throughput for both and the ratio assertscope / ruff (target: >= 2.0, twice ruff's default rules).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def python_files(dirs):
    files = []
    for d in dirs:
        for root, subdirs, names in os.walk(d):
            subdirs.sort()
            files.extend(os.path.join(root, n) for n in sorted(names) if n.endswith(".py"))
    return files


def count_lines(files):
    total = 0
    for f in files:
        with open(f, "rb") as handle:
            total += handle.read().count(b"\n")
    return total


def timed(cmd):
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    return elapsed, proc.returncode, proc.stderr.decode(errors="replace")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="+")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ruff", default=shutil.which("ruff"))
    parser.add_argument("--assertscope", default=str(REPO / "target/release/assertscope"))
    args = parser.parse_args()
    if not args.ruff:
        sys.exit("ruff not found: pip install ruff, or pass --ruff PATH")
    if not Path(args.assertscope).exists():
        subprocess.run(["cargo", "build", "--release", "--bin", "assertscope"], cwd=REPO, check=True)

    files = python_files(args.dirs)
    if not files:
        sys.exit("no *.py files under " + " ".join(args.dirs))
    lines = count_lines(files)
    tools = {
        "assertscope": [args.assertscope, "lint", "--format", "json", *files],
        "ruff": [args.ruff, "check", "--isolated", "--no-cache", "--exit-zero", "--output-format", "concise", *files],
    }
    # One untimed run each warms the page cache and checks the command works.
    for name, cmd in tools.items():
        _, code, err = timed(cmd)
        if code not in (0, 1):
            sys.exit(f"{name} failed ({code}): {err[-500:]}")
    times = {name: [] for name in tools}
    for _ in range(args.runs):
        for name, cmd in tools.items():
            times[name].append(timed(cmd)[0])

    print(f"corpus: {len(files)} files, {lines} lines; {args.runs} runs each, median wall time, {os.cpu_count()} cores")
    rate = {}
    for name in tools:
        median = statistics.median(times[name])
        rate[name] = lines / median
        print(f"{name:12} {median:7.3f} s  {rate[name]:12,.0f} lines/s   (runs: {', '.join(f'{t:.3f}' for t in times[name])})")
    print(f"ratio assertscope/ruff: {rate['assertscope'] / rate['ruff']:.2f}x (target >= 2.0x)")


if __name__ == "__main__":
    main()
