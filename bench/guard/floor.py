"""The floor under the guard's default-mode cost on one op: the op called directly, through a
Python function that only forwards it, through one that reads `x.is_cpu` first (the least a
wrapper that must tell a CPU call from a CUDA one can do), and through the guard's own
wrapper, interleaved in one process. Where the guard's column sits at the `is_cpu` one, the
guard does no more than any such wrapper must.

    python bench/guard/floor.py [--op quantile] [--rounds 31] [--calls 300]
"""

import argparse
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import torch  # noqa: E402

import assertscope  # noqa: E402
from passthrough import forwarding_keywords_only_when_given, per_call_us  # noqa: E402 - beside this file


def inputs(op):
    gen = torch.Generator().manual_seed(0)
    scores = torch.rand(256, generator=gen)
    return {
        "quantile": (scores, torch.tensor([0.5, 0.9])),
        "nanquantile": (scores, torch.tensor([0.5, 0.9])),
        "multinomial": (torch.rand(64, 100, generator=gen), 1),
        "histc": (scores,),
        "bincount": (torch.randint(0, 1000, (256,), generator=gen),),
    }[op]


def variants(op):
    def reads_is_cpu(*args, **kwargs):
        if args[0].is_cpu:
            return op(*args, **kwargs) if kwargs else op(*args)
        raise AssertionError("a CPU benchmark")

    return {"direct": op, "forward": forwarding_keywords_only_when_given(op), "is_cpu first": reads_is_cpu}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--op", default="quantile", choices=["quantile", "nanquantile", "multinomial", "histc", "bincount"])
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    op = getattr(torch, args.op)
    op_args = inputs(args.op)
    calls = variants(op)
    names = [*calls, "guard"]
    times = {name: [] for name in names}
    for round_number in range(args.rounds):
        shift = round_number % len(names)
        for name in names[shift:] + names[:shift]:
            if name == "guard":
                with assertscope.guard():
                    guarded = getattr(torch, args.op)  # the wrapper, looked up as user code does
                    times[name].append(per_call_us(guarded, op_args, args.calls))
            else:
                times[name].append(per_call_us(calls[name], op_args, args.calls))
    print(f"torch {torch.__version__}, {args.op}, 1 thread, CPU clock, {args.rounds} interleaved rounds; us per call")
    direct = times["direct"]
    for name in names:
        added = statistics.median(t - d for d, t in zip(direct, times[name]))
        print(f"  {name:14s} {statistics.median(times[name]):8.2f}  +{added:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
