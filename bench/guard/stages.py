"""Where the time of one checked call goes: the stages of `table.index_select(0, idx)` in
sync mode on the CPU (on the CPU the default mode leaves the check to PyTorch's kernel; sync
runs the checking path that CUDA tensors take), for an index tensor the guard has not seen
("fresh": it must be read) and for one it has ("remembered": _verified answers), each stage
timed on its own with the guard's real functions on real tensors. Medians of interleaved
rounds.

    python bench/guard/stages.py                 # 256 index entries
    python bench/guard/stages.py --entries 1000 --clock cpu

The fresh total is bounded below by the read itself (one aminmax and two .item()), which
costs about as much as a small index_select.
"""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import torch  # noqa: E402

import assertscope  # noqa: E402
from assertscope._guard import _state, _verified  # noqa: E402
from assertscope._guard._call import Call  # noqa: E402
from assertscope._guard.checks import index_dim  # noqa: E402

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
NAMES = ("input", "dim", "index")


def stages(table):
    """{stage: a function of one index tensor}, each doing only that stage's work."""
    check = index_dim._SELECT
    original = torch._C.TensorBase.index_select
    item = torch._C.TensorBase.item

    def read(idx):
        low, high = torch.aminmax(idx)
        return item(low), item(high)

    def remember(idx):
        _verified.remember(_verified.region(idx), 0, 1)

    return {
        "op alone (index_select)": lambda idx: original(table, 0, idx),
        "guarded call, fresh index": lambda idx: table.index_select(0, idx),
        "guarded call, remembered index": None,  # timed on `seen`
        "skip_call (compiling? tracing? inside the guard?)": lambda idx: _state.skip_call(),
        "Call + quick() lookup (a miss)": lambda idx: check.quick(Call(NAMES, (table, 0, idx), {})),
        "rules() (bounds from shapes, one RangeRule)": lambda idx: check.rules(Call(NAMES, (table, 0, idx), {})),
        "region of the tensor (storage, key, version)": _verified.region,
        "the read: aminmax": torch.aminmax,
        "the read: aminmax + 2 x .item()": read,
        "remember (storage entry + identity entry)": remember,
    }


def measure(args):
    torch.set_num_threads(1)
    clock = CLOCKS[args.clock]
    table = torch.randn(1000, 16)
    base = torch.randint(0, 1000, (args.entries,))
    seen = base.clone()
    rounds = {}
    with assertscope.guard(mode="sync"):
        table.index_select(0, seen)  # remembered from now on
        for _ in range(args.rounds):
            for name, stage in stages(table).items():
                # fresh clones for every stage: none of them was seen by the guard
                tensors = [seen] * args.calls if stage is None else [base.clone() for _ in range(args.calls)]
                run = (lambda idx: table.index_select(0, idx)) if stage is None else stage
                start = clock()
                for idx in tensors:
                    run(idx)
                rounds.setdefault(name, []).append((clock() - start) / args.calls * 1e6)
            _verified._by_identity.clear()
    return {name: statistics.median(times) for name, times in rounds.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--clock", default="wall", choices=list(CLOCKS))
    args = parser.parse_args(argv)
    table = measure(args)
    print(f"torch {torch.__version__}, {args.entries} index entries, clock {args.clock}, median of {args.rounds} rounds; us per call")
    plain = table["op alone (index_select)"]
    for name, us in table.items():
        added = f"  (+{us - plain:.2f} over the op)" if name.startswith("guarded") else ""
        print(f"  {name:52s} {us:8.2f}{added}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
