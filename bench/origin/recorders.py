"""Cost of the origin recorders on clean runs: what the guard adds per DataLoader batch
(the sampler's indices and weak references to the batch's tensors) and per construction of
a tracked module (one walk up the stack), measured against the same work without the guard,
interleaved in one process so that machine load hits both alike.

    python bench/origin/recorders.py [--rounds 30] [--batches 200] [--layers 200]

The DataLoader case is a worst case: tiny batches from an in-memory TensorDataset, no model,
so the per-batch bookkeeping is as large a share of the time as it can be.
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

import assertscope  # noqa: E402


def iterate(loader):
    start = time.perf_counter()
    for x, y in loader:
        pass
    return time.perf_counter() - start


def build(layers):
    start = time.perf_counter()
    torch.nn.Sequential(*[torch.nn.Linear(8, 8) for _ in range(layers)])
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--layers", type=int, default=200)
    args = parser.parse_args()
    torch.set_num_threads(1)
    data = TensorDataset(torch.randn(args.batches * 16, 4), torch.arange(args.batches * 16) % 3)
    loader = DataLoader(data, batch_size=16, shuffle=True)
    times = {"loader plain": [], "loader guard": [], "modules plain": [], "modules guard": []}
    for _ in range(args.rounds):
        times["loader plain"].append(iterate(loader))
        times["modules plain"].append(build(args.layers))
        with assertscope.guard(mode="sync"):
            times["loader guard"].append(iterate(loader))
            times["modules guard"].append(build(args.layers))
    for what in ("loader", "modules"):
        plain, guard = statistics.median(times[f"{what} plain"]), statistics.median(times[f"{what} guard"])
        unit = f"per {args.batches} batches" if what == "loader" else f"per {args.layers} nn.Linear"
        print(f"{what:8} plain {plain * 1e3:8.2f} ms  guard {guard * 1e3:8.2f} ms  ratio {guard / plain:.3f}  ({unit})")


if __name__ == "__main__":
    main()
