"""The floor under a guarded call's cost: what calling an op through a Python function that
only forwards its arguments costs, against calling it directly, in the same run. On some ops
(quantile, nanquantile, multinomial) this alone is several microseconds, so the guard's
default-mode cost there (bench/guard/per_call.py) is to be read against it.

    python bench/guard/passthrough.py [--rounds 21] [--calls 300]
"""

import argparse
import statistics
import sys
import time

import torch


def forwarding(op):
    def forward(*args, **kwargs):
        return op(*args, **kwargs)

    return forward


def calls():
    gen = torch.Generator().manual_seed(0)
    scores = torch.rand(256, generator=gen)
    quantiles = torch.tensor([0.5, 0.9])
    probabilities = torch.rand(64, 100, generator=gen)
    ids = torch.randint(0, 1000, (256,), generator=gen)
    return {
        "quantile": (torch.quantile, (scores, quantiles)),
        "nanquantile": (torch.nanquantile, (scores, quantiles)),
        "multinomial": (torch.multinomial, (probabilities, 1)),
        "histc": (torch.histc, (scores,)),
        "bincount": (torch.bincount, (ids,)),
    }


def per_call_us(op, args, count):
    start = time.process_time()
    for _ in range(count):
        op(*args)
    return (time.process_time() - start) / count * 1e6


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread, CPU clock, {args.rounds} interleaved rounds; us per call")
    print(f"{'op':14s} {'direct':>8s} {'forwarded +us':>14s} {'ratio':>7s}")
    for name, (op, op_args) in calls().items():
        variants = [op, forwarding(op)]
        times = [[], []]
        for round_number in range(args.rounds):
            order = [0, 1] if round_number % 2 == 0 else [1, 0]
            for which in order:
                times[which].append(per_call_us(variants[which], op_args, args.calls))
        added = statistics.median(f - d for d, f in zip(*times))
        ratio = statistics.median(f / d for d, f in zip(*times))
        print(f"{name:14s} {statistics.median(times[0]):8.2f} {added:14.2f} {ratio:7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
