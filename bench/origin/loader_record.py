"""What clean runs pay for the dataset indices: one DataLoader epoch iterated plain vs with
the guard's batch recorder installed (origin/loader.py: the sampler's indices and weak
references to the batch's tensors, per batch), interleaved in the same run so that machine
noise hits both alike. Batches are a tuple of tensors and a dict of tensors (the shapes of
TensorDataset and of tokenizer collators).

    python bench/origin/loader_record.py [--rounds 30] [--batches 200]

Prints the median epoch time of each variant and the ratio recorder/plain (target: <= 1.02).
"""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import torch  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from assertscope._guard.origin import loader as recorder  # noqa: E402


def dict_collate(samples):
    return {"input_ids": torch.stack([s[0] for s in samples]), "labels": torch.stack([s[1] for s in samples])}


def epoch(data_loader):
    start = time.perf_counter()
    for _ in data_loader:
        pass
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--batches", type=int, default=200)
    args = parser.parse_args()
    torch.manual_seed(0)
    n = args.batches * 16
    data = TensorDataset(torch.randint(0, 100, (n, 32)), torch.randint(0, 4, (n,)))
    loaders = {
        "tuple": DataLoader(data, batch_size=16, shuffle=True),
        "dict": DataLoader(data, batch_size=16, shuffle=True, collate_fn=dict_collate),
    }
    for name, data_loader in loaders.items():
        times = {"plain": [], "recorder": []}
        for _ in range(args.rounds):
            for variant in ("plain", "recorder"):
                if variant == "recorder":
                    recorder.install()
                try:
                    times[variant].append(epoch(data_loader))
                finally:
                    recorder.uninstall()
                    recorder.forget()
        plain, recorded = statistics.median(times["plain"]), statistics.median(times["recorder"])
        print(f"{name:6} plain {plain * 1e3:8.2f} ms  recorder {recorded * 1e3:8.2f} ms  ratio {recorded / plain:.3f}")


if __name__ == "__main__":
    main()
