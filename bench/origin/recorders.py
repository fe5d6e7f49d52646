"""Cost of the origin recorders on clean runs: what they add per DataLoader batch (the
sampler's indices and weak references to the batch's tensors) and per construction of a
tracked module (one walk up the stack), measured with the guard on, recorders on vs off,
and against no guard at all, interleaved in one process so that machine load hits all alike.

    python bench/origin/recorders.py [--rounds 30] [--batches 200] [--layers 200]

Times are CPU time of this process (time.process_time): on a loaded machine they vary far less
than wall time. The DataLoader case is a worst case: tiny batches from an in-memory TensorDataset, no model,
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
    start = time.process_time()
    for x, y in loader:
        pass
    return time.process_time() - start


def build(layers):
    start = time.process_time()
    torch.nn.Sequential(*[torch.nn.Linear(8, 8) for _ in range(layers)])
    return time.process_time() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--layers", type=int, default=200)
    args = parser.parse_args()
    torch.set_num_threads(1)
    data = TensorDataset(torch.randn(args.batches * 16, 4), torch.arange(args.batches * 16) % 3)
    loader = DataLoader(data, batch_size=16, shuffle=True)
    from assertscope._guard import origin

    variants = ("plain", "guard without recorders", "guard")
    times = {(what, v): [] for what in ("loader", "modules") for v in variants}
    for _ in range(args.rounds):
        times["loader", "plain"].append(iterate(loader))
        times["modules", "plain"].append(build(args.layers))
        with assertscope.guard(mode="sync"):
            origin.uninstall()
            times["loader", "guard without recorders"].append(iterate(loader))
            times["modules", "guard without recorders"].append(build(args.layers))
            origin.install()
            times["loader", "guard"].append(iterate(loader))
            times["modules", "guard"].append(build(args.layers))
    for what in ("loader", "modules"):
        plain, bare, guard = (statistics.median(times[what, v]) for v in variants)
        unit = f"per {args.batches} batches" if what == "loader" else f"per {args.layers} nn.Linear"
        print(
            f"{what:8} plain {plain * 1e3:8.2f} ms  guard without recorders {bare * 1e3:8.2f} ms  "
            f"guard {guard * 1e3:8.2f} ms  recorders' share {guard / bare:.3f}x  ({unit})"
        )


if __name__ == "__main__":
    main()
