"""How much gathering the facts of a batch costs, against the least any NaN check does.

Runs assertscope.scan's Gatherer over in-memory batches of image-sized float inputs and
int64 labels (no decoding, so the gathering is all there is), and over the same batches
a bare `torch.isfinite(x).all()` per input, which is what any check for NaN/inf must do.
Prints the median of several runs of each and their ratio.

    PYTHONPATH=python python bench/scan/gather.py [--runs 5] [--batches 8]
"""

import argparse
import statistics
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

from assertscope import scan


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--batches", type=int, default=8)
    args = ap.parse_args()
    torch.manual_seed(0)
    x = torch.randn(32 * args.batches, 3, 224, 224)
    y = torch.randint(0, 10, (32 * args.batches,))
    batches = list(DataLoader(TensorDataset(x, y), batch_size=32))
    # The plan the binary gives for `--num-classes 10` (ScanPlan::to_json).
    plan = {
        "labels": {"hist_len": 10, "upper": 10, "ignore": -100, "max_positions": None, "row_patterns": True, "sort_floats": True},
        "inputs": {"hist_len": 65536, "upper": None, "ignore": None, "max_positions": None, "row_patterns": False, "sort_floats": False},
    }
    options = argparse.Namespace(label_key=None, input_key=None)

    def gather():
        gatherer = scan.Gatherer(options, plan, unbatched=False)
        for i, batch in enumerate(batches):
            gatherer.add(i, batch, list(range(32 * i, 32 * i + 32)))

    def baseline():
        for inputs, _ in batches:
            bool(torch.isfinite(inputs).all())

    timings = {"gather": [], "isfinite": []}
    for _ in range(args.runs):
        for name, run in (("gather", gather), ("isfinite", baseline)):
            start = time.perf_counter()
            run()
            timings[name].append(time.perf_counter() - start)
    gather_s, base_s = statistics.median(timings["gather"]), statistics.median(timings["isfinite"])
    print(f"{args.batches} batches of [32, 3, 224, 224] float32 + [32] int64, median of {args.runs}:")
    print(f"  gather facts    {gather_s:.3f} s")
    print(f"  isfinite only   {base_s:.3f} s")
    print(f"  ratio           {gather_s / base_s:.2f}")


if __name__ == "__main__":
    main()
