#!/usr/bin/env python3
"""Throughput and peak memory of `assertscope explain` on a large log, against ripgrep on
the same file in the same run: the named baseline is `rg -c -e 'Assertion `' -e
'Traceback \\(most recent call last\\)' -e 'Error:' -e 'device-side assert'` (what a person
greps a crash log for); ripgrep over explain's trigger literals, and over the literals its
prefilter searches the bulk of a large log for (crates/logs/src/log/prefilter.rs), are printed beside it.

    python3 bench/explain/throughput.py [--size-gb 0.8] [--runs 5] [--bin target/release/assertscope] [--rg PATH]

The log is generated once (bench/out/explain-<size>g.log): realistic training output
(progress bars, step lines, warnings, evaluation tables) with a device-side assert and its
traceback near the end. The tools run interleaved (rg, assertscope, rg, ...) so that both
see the same load; prints the medians, GB/s, the ratio assertscope/ripgrep (>= 1.0 means
assertscope is at least as fast), assertscope's peak RSS and the load average.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "bench" / "out"

CHATTER = [
    "Epoch {e}/300: {p:3d}%|{bar:<10}| {i}/1563 [{m:02d}:{s:02d}<04:41,  5.51it/s, loss={l:.4f}, lr=3.00e-04]",
    "step {i:>7} | loss {l:.4f} | lr 3.00e-04 | grad_norm {g:.3f} | tokens/s 48213",
    "[2026-11-02 10:{m:02d}:{s:02d},512][train][INFO] - epoch {e} batch {i} loss {l:.5f} acc {a:.3f}",
    "{{'loss': {l:.4f}, 'learning_rate': 2.9e-05, 'epoch': {e}.{i}}}",
    "/opt/conda/lib/python3.11/site-packages/torch/utils/data/dataloader.py:617: UserWarning: This DataLoader will create 8 worker processes in total.",
    "val | precision 0.{i:04d} | recall 0.81{e} | f1 0.79 | auc 0.9{s}",
    "  [checkpoint] saved runs/exp{e}/ckpt_{i}.pt ({m} MB)",
    "grad_norm {g:.2e} clip 1.0 scale 65536.0",
]

TAIL = """\
../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [3,0,0] Assertion `t >= 0 && t < n_classes` failed.
../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [8,0,0] Assertion `t >= 0 && t < n_classes` failed.
Traceback (most recent call last):
  File "/home/user/project/train.py", line 142, in <module>
    main(args)
  File "/home/user/project/train.py", line 71, in train_epoch
    total_loss += loss.item()
RuntimeError: CUDA error: device-side assert triggered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1
Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.
"""


def generate(path, size_bytes):
    import random

    rng = random.Random(7)
    block_lines = []
    for i in range(20000):
        tpl = CHATTER[rng.randrange(len(CHATTER))]
        p = rng.randrange(100)
        block_lines.append(tpl.format(e=rng.randrange(1, 300), p=p, bar="#" * (p // 10), i=i, m=rng.randrange(60),
                                      s=rng.randrange(60), l=rng.random() * 3, g=rng.random() * 5, a=rng.random()))
    block = ("\n".join(block_lines) + "\n").encode()
    tail = TAIL.encode()
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        written = 0
        while written + len(block) + len(tail) < size_bytes:
            f.write(block)
            written += len(block)
        f.write(tail)
        f.write(block[: 4096])
    tmp.rename(path)


def literals(file, const):
    src = (REPO / "crates" / "logs" / "src" / "log" / file).read_text()
    body = src.split(f"pub const {const}: &[&str] = &[", 1)[1].split("];", 1)[0]
    return [re.sub(r"\\(.)", r"\1", s) for s in re.findall(r'"((?:[^"\\]|\\.)*)"', body)]


def triggers():
    return literals("triggers.rs", "TRIGGERS")


def seeds():
    return literals("prefilter.rs", "SEEDS") + literals("prefilter.rs", "EVERYWHERE_HINTS")


def once(cmd):
    """Seconds and peak RSS (KB) of one run."""
    start = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"{cmd[0]} failed: {proc.stderr.decode()}")
    return seconds, int(proc.stderr.decode().strip().splitlines()[-1])


def interleaved(cmds, runs):
    """Runs the commands in turn, `runs` rounds: medians of seconds, maxima of RSS."""
    times = {name: [] for name in cmds}
    rss = {name: 0 for name in cmds}
    for _ in range(runs):
        for name, cmd in cmds.items():
            t, m = once(cmd)
            times[name].append(t)
            rss[name] = max(rss[name], m)
    return {name: (statistics.median(times[name]), rss[name], times[name]) for name in cmds}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-gb", type=float, default=0.8)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "assertscope"))
    ap.add_argument("--rg", default=shutil.which("rg"), help="ripgrep binary (default: rg on PATH)")
    args = ap.parse_args()
    if not args.rg or not Path(args.rg).exists():
        sys.exit("ripgrep is needed as the baseline: apt-get install ripgrep, or pass --rg PATH")
    if not Path(args.bin).exists():
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
    OUT.mkdir(parents=True, exist_ok=True)
    log = OUT / f"explain-{args.size_gb:g}g.log"
    size = int(args.size_gb * (1 << 30))
    if not log.exists() or log.stat().st_size < size * 0.95:
        print(f"generating {log} ...", flush=True)
        generate(log, size)
    patterns = OUT / "explain-triggers.txt"
    patterns.write_text("\n".join(triggers()) + "\n")
    seed_patterns = OUT / "explain-seeds.txt"
    seed_patterns.write_text("\n".join(seeds()) + "\n")
    subprocess.run(["cat", str(log)], stdout=subprocess.DEVNULL, check=True)  # warm the page cache

    gb = log.stat().st_size / 1e9
    load_before = os.getloadavg()
    results = interleaved(
        {
            # The named baseline: the lines a person would grep for in a crash log.
            "rg": [args.rg, "-c", "-e", "Assertion `", "-e", r"Traceback \(most recent call last\)", "-e", "Error:",
                   "-e", "device-side assert", str(log)],
            "rg-triggers": [args.rg, "--count", "-F", "-f", str(patterns), str(log)],
            "rg-seeds": [args.rg, "--count", "-F", "-f", str(seed_patterns), str(log)],
            "assertscope": [args.bin, "explain", "--json", str(log)],
        },
        args.runs,
    )
    load_after = os.getloadavg()
    check = subprocess.run([args.bin, "explain", "--json", str(log)], stdout=subprocess.PIPE)
    assert b'"target-out-of-range"' in check.stdout, "the assert near the end was not found"
    rg_s, rg_rss, rg_all = results["rg"]
    tr_s, _, _ = results["rg-triggers"]
    sd_s, _, _ = results["rg-seeds"]
    as_s, as_rss, as_all = results["assertscope"]
    print(f"log: {gb:.2f} GB, {len(triggers())} literals, {args.runs} interleaved runs, {os.cpu_count()} CPUs")
    print(f"load average (1, 5, 15 min): before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")
    print(f"rg -c -e 'Assertion `' -e 'Traceback \\(most recent call last\\)' -e 'Error:' -e 'device-side assert' (baseline): median {rg_s:.3f} s  {gb / rg_s:.2f} GB/s  peak RSS {rg_rss / 1024:.1f} MB  runs {' '.join(f'{t:.3f}' for t in rg_all)}")
    print(f"rg --count -F -f <explain's trigger literals>: median {tr_s:.3f} s  {gb / tr_s:.2f} GB/s")
    print(f"rg --count -F -f <the prefilter's {len(seeds())} bulk literals>: median {sd_s:.3f} s  {gb / sd_s:.2f} GB/s")
    print(f"assertscope explain: median {as_s:.3f} s  {gb / as_s:.2f} GB/s  peak RSS {as_rss / 1024:.1f} MB  runs {' '.join(f'{t:.3f}' for t in as_all)}")
    print(f"throughput ratio assertscope/ripgrep: {rg_s / as_s:.2f}x (target >= 1.0)")
    print(f"assertscope peak memory: {as_rss / 1024:.1f} MB (target <= 64 MB)")


if __name__ == "__main__":
    main()
