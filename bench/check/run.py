"""Benchmark `assertscope check` on 100 million labels against polars and numpy.

Writes 100M labels as CSV, Parquet and NPY under bench/out/check (git ignores it),
warms the page cache, then times in the same run:

  * assertscope check FILE --num-classes 10 --json   (range, negatives, NaN, histogram)
  * polars: scan, min, max, null count and value counts of the same column (CSV, Parquet)
  * numpy: np.load(mmap_mode="r"), min, max, bincount (NPY)
  * the page-cache read baseline for NPY: `cat FILE > /dev/null`

Each is a separate process; the best of --repeat runs is reported, with the peak RSS
of that process (getrusage of the child). polars and numpy are timed both as whole
processes and from inside (excluding the interpreter start and imports).

Usage: python bench/check/run.py [--rows N] [--repeat K] [--binary PATH]
Needs numpy, pyarrow and polars (tests/requirements.txt).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "bench" / "out" / "check"
NUM_CLASSES = 10

POLARS = r"""
import sys, time, json
import polars as pl
path, kind = sys.argv[1], sys.argv[2]
t = time.perf_counter()
lf = pl.scan_csv(path) if kind == "csv" else pl.scan_parquet(path)
c = pl.col("label")
stats, counts = pl.collect_all([
    lf.select(c.min().alias("min"), c.max().alias("max"), c.null_count().alias("nulls")),
    lf.select(c.value_counts()),
])
elapsed = time.perf_counter() - t
row = stats.row(0)
print(json.dumps({"inner_s": elapsed, "min": row[0], "max": row[1], "nulls": row[2], "classes": counts.height}))
"""

NUMPY = r"""
import sys, time, json
import numpy as np
t = time.perf_counter()
a = np.load(sys.argv[1], mmap_mode="r")
lo, hi = int(a.min()), int(a.max())
counts = np.bincount(a)
elapsed = time.perf_counter() - t
print(json.dumps({"inner_s": elapsed, "min": lo, "max": hi, "classes": int((counts > 0).sum())}))
"""


def generate(rows: int) -> dict[str, Path]:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    import polars as pl

    OUT.mkdir(parents=True, exist_ok=True)
    paths = {"csv": OUT / f"labels-{rows}.csv", "parquet": OUT / f"labels-{rows}.parquet", "npy": OUT / f"labels-{rows}.npy"}
    if all(p.exists() for p in paths.values()):
        return paths
    print(f"generating {rows:,} labels in {OUT} ...", file=sys.stderr)
    labels = np.random.default_rng(0).integers(0, NUM_CLASSES, rows, dtype=np.int64)
    np.save(paths["npy"], labels)
    pq.write_table(pa.table({"label": labels}), paths["parquet"])
    pl.DataFrame({"label": labels}).write_csv(paths["csv"])
    return paths


def timed(cmd: list[str], repeat: int, capture: bool = True) -> tuple[float, float, str]:
    """Best wall time, the peak RSS (MiB) of the best run, and its output (small outputs
    only: the child writes to a file, so a pipe never blocks it)."""
    import tempfile

    # GNU time reports the peak RSS of the command alone: a child forked straight from
    # this (large) Python process would inherit its high-water mark.
    measure = ["/usr/bin/time", "-f", "%M"] if os.path.exists("/usr/bin/time") else []
    best = None
    for _ in range(repeat):
        with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
            start = time.perf_counter()
            proc = subprocess.Popen(measure + cmd, stdout=out_f if capture else subprocess.DEVNULL, stderr=err_f)
            _, status, usage = os.wait4(proc.pid, 0)
            elapsed = time.perf_counter() - start
            proc.returncode = os.waitstatus_to_exitcode(status)
            out_f.seek(0)
            err_f.seek(0)
            out = out_f.read().decode()
            err = err_f.read().decode()
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)} failed ({code}): {err[-2000:]}")
        rss = int(err.strip().splitlines()[-1]) / 1024 if measure else usage.ru_maxrss / 1024
        if best is None or elapsed < best[0]:
            best = (elapsed, rss, out)
    return best


def warm(path: Path) -> None:
    subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=100_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--binary", default=str(ROOT / "target" / "release" / "assertscope"))
    args = ap.parse_args()
    if not Path(args.binary).exists():
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    paths = generate(args.rows)
    py = sys.executable
    print(f"{args.rows:,} labels, {NUM_CLASSES} classes, {os.cpu_count()} cores, best of {args.repeat}\n")
    header = f"{'format':8} {'tool':26} {'seconds':>8} {'inner s':>8} {'peak RSS MiB':>13}  {'file MiB':>8}"
    print(header)
    print("-" * len(header))
    results = {}
    for kind, path in paths.items():
        size = path.stat().st_size / 2**20
        warm(path)
        ours_s, ours_rss, out = timed([args.binary, "check", str(path), "--num-classes", str(NUM_CLASSES), "--json"], args.repeat)
        report = json.loads(out)
        values = report["diagnoses"][0]["values"]
        print(f"{kind:8} {'assertscope check':26} {ours_s:8.3f} {'':>8} {ours_rss:13.1f}  {size:8.1f}")
        if kind in ("csv", "parquet"):
            other_s, other_rss, out = timed([py, "-c", POLARS, str(path), kind], args.repeat)
            theirs = json.loads(out)
            name = "polars"
        else:
            other_s, other_rss, out = timed([py, "-c", NUMPY, str(path)], args.repeat)
            theirs = json.loads(out)
            name = "numpy (mmap)"
        assert (theirs["min"], theirs["max"]) == (values["min"], values["max"]), (theirs, values)
        print(f"{'':8} {name:26} {other_s:8.3f} {theirs['inner_s']:8.3f} {other_rss:13.1f}")
        results[kind] = {"ours": ours_s, "other": other_s, "other_inner": theirs["inner_s"], "rss": ours_rss}
        if kind == "npy":
            cat_s, cat_rss, _ = timed(["cat", str(path)], args.repeat, capture=False)
            print(f"{'':8} {'cat (page cache baseline)':26} {cat_s:8.3f} {'':>8} {cat_rss:13.1f}")
            results[kind]["cat"] = cat_s
    print()
    for kind in ("csv", "parquet"):
        r = results[kind]
        print(
            f"{kind}: assertscope is {r['other'] / r['ours']:.2f}x polars (whole process), "
            f"{r['other_inner'] / r['ours']:.2f}x polars' query alone; target >= 1.5x"
        )
    r = results["npy"]
    print(
        f"npy: assertscope runs at {r['cat'] / r['ours'] * 100:.0f}% of the page-cache read speed (cat), "
        f"{r['other'] / r['ours']:.2f}x numpy; target >= 70%"
    )
    print(f"csv: peak RSS {results['csv']['rss']:.1f} MiB; target <= 256 MB")


if __name__ == "__main__":
    main()
