"""The floor under a guarded call's cost: what calling an op through a Python function that
only forwards its arguments costs, against calling it directly, in the same run: once as
`op(*args, **kwargs)` and once passing keywords only when there are some, as the guard does.
On ops with several overloads (quantile, nanquantile) an empty `**{}` alone costs PyTorch's
argument parser 1-2 us, and the Python frame itself costs more there than on a small op, so
the guard's default-mode cost there (bench/guard/per_call.py) is to be read against it.

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


def forwarding_keywords_only_when_given(op):
    """As the guard forwards: an empty **{} costs PyTorch's parser its keyword path."""

    def forward(*args, **kwargs):
        return op(*args, **kwargs) if kwargs else op(*args)

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
    print(f"{'op':14s} {'direct':>8s} {'**kwargs +us':>13s} {'ratio':>7s} {'args only +us':>14s} {'ratio':>7s}")
    for name, (op, op_args) in calls().items():
        variants = [op, forwarding(op), forwarding_keywords_only_when_given(op)]
        times = [[] for _ in variants]
        for round_number in range(args.rounds):
            shift = round_number % len(variants)
            for which in list(range(len(variants)))[shift:] + list(range(len(variants)))[:shift]:
                times[which].append(per_call_us(variants[which], op_args, args.calls))
        columns = []
        for forwarded in times[1:]:
            columns.append(statistics.median(f - d for d, f in zip(times[0], forwarded)))
            columns.append(statistics.median(f / d for d, f in zip(times[0], forwarded)))
        print(f"{name:14s} {statistics.median(times[0]):8.2f} {columns[0]:13.2f} {columns[1]:7.3f} "
              f"{columns[2]:14.2f} {columns[3]:7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
