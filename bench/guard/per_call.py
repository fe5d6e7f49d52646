"""What one guarded call costs: microseconds per call of every guarded op family, unguarded
and under the guard in the default mode and in forced async mode, on a small input (at
most 1,000 index entries) and a large one. Variants alternate in rounds and each round
compares calls made moments apart, so load from other processes on a shared machine hits
every variant alike. Target: default mode <= 3 us over unguarded on small inputs, for every
family alike (the value checks of histc, quantile, nanquantile, bincount, searchsorted,
multinomial, bernoulli, poisson, normal and the losses as for the index checks).
On the CPU the default mode runs each call as unguarded and only explains a refusal of
PyTorch's CPU kernel (all families but ctc_loss), so its column there is the wrappers' own
cost; the async column checks before every call, as the default mode does on CUDA. Every
call of a family reuses the same inputs, so from the second call on an index tensor's range
is remembered (_verified) and the async column measures that path; bench/guard/stages.py
times a guarded call on an index tensor the guard has never seen, stage by stage.

The `again` column times unguarded against unguarded in the same rounds: the noise floor
of the others. `--kernels replay` takes the kernels out of the measurement: every guarded op
is first replaced by a stub that returns the result of its first real call, then the guard
wraps the stubs as it wraps the ops, so guarded minus plain is the guard's own work alone
(its tests, its wrapper, its bookkeeping). Each family's inputs are the same on every call,
so the replayed result is the one the op would give. With real kernels the same work costs
more after an op that runs many small internal ops (quantile, multinomial, embedding_bag):
there a Python function that only forwards the call, or only reads `x.is_cpu` first, costs
1-3 us by itself (bench/guard/passthrough.py).

    python bench/guard/per_call.py                        # CPU, every family
    python bench/guard/per_call.py --sizes small --kernels replay --clock cpu
    python bench/guard/per_call.py --device cuda --families embedding "x[idx]"
    python bench/guard/per_call.py --json

Columns: plain us per call; `again`, the added us of a second unguarded variant (the
noise floor); for each guard mode the added us per call (median over rounds of guarded minus
plain) and the ratio guarded / plain.
"""

import argparse
import json
import os
import statistics
import sys
import time

TARGET_ADDED_US = 3.0  # default mode, small inputs
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
clock = time.perf_counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import assertscope  # noqa: E402


def families(device, size):
    """{family: a function of no arguments making one call}, inputs built once."""
    n = 256 if size == "small" else 1_000_000  # index entries
    rows = 1000
    gen = torch.Generator().manual_seed(0)

    def ints(high, count=n):
        return torch.randint(0, high, (count,), generator=gen).to(device)

    table = torch.randn(rows, 16).to(device)
    logits = torch.randn(min(n, 4096) if size == "small" else 65536, 10).to(device)
    targets = ints(10, logits.shape[0])
    flat = torch.randn(rows * 16).to(device)
    source = torch.randn(n, 16).to(device)
    probabilities = torch.rand(64, 100).to(device)
    pool_out, pool_indices = F.max_pool2d(torch.randn(1, 4, 16, 16), 2, return_indices=True)
    pool_out, pool_indices = pool_out.to(device), pool_indices.to(device)
    bce_input = torch.rand(n).to(device)
    bce_target = torch.rand(n).to(device).round()
    mask = (torch.rand(rows, 16) < 0.5).to(device)
    ids = ints(rows)
    node_features = torch.zeros(rows, 16).to(device)
    repeats = ints(3, min(n, 1000))
    repeats_total = int(repeats.sum())
    ctc_log_probs = torch.randn(50, 4, 20).log_softmax(2).to(device)
    ctc_targets = torch.randint(1, 20, (4, 10), generator=gen).to(device)
    ctc_lengths = torch.full((4,), 50, dtype=torch.long).to(device)
    ctc_target_lengths = torch.full((4,), 10, dtype=torch.long).to(device)
    scores = torch.rand(n).to(device)
    quantiles = torch.tensor([0.5, 0.9]).to(device)
    edges = torch.linspace(0, 1, 65).to(device)
    sorter = torch.arange(65).to(device)
    margin_targets = ints(10, logits.shape[0])
    multilabel_targets = torch.randint(-1, 10, logits.shape, generator=gen).to(device)
    return {
        "embedding": lambda: F.embedding(ids, table),
        "embedding_bag": lambda: F.embedding_bag(ids, table, torch.arange(0, n, max(1, n // 8), device=device)),
        "cross_entropy": lambda: F.cross_entropy(logits, targets),
        "nll_loss": lambda: F.nll_loss(logits, targets),
        "one_hot": lambda: F.one_hot(targets, 10),
        "binary_cross_entropy": lambda: F.binary_cross_entropy(bce_input, bce_target),
        "x[idx]": lambda: table[ids],
        "x[idx] = v": lambda: node_features.__setitem__(ids, 1.0),
        "x[0] (int)": lambda: table[0],
        "x[:, 1:] (slices)": lambda: table[:, 1:],
        "index_put_": lambda: node_features.index_put_((ids,), source[: ids.shape[0]], accumulate=True),
        "index_select": lambda: table.index_select(0, ids),
        "index_add_": lambda: node_features.index_add_(0, ids, source[: ids.shape[0]]),
        "gather": lambda: logits.gather(1, targets.unsqueeze(1)),
        "scatter_add_": lambda: node_features.scatter_add_(0, ids.unsqueeze(1).expand(-1, 16), source[: ids.shape[0]]),
        "take": lambda: flat.take(ids),
        "multinomial": lambda: torch.multinomial(probabilities, 1),
        "bernoulli": lambda: torch.bernoulli(bce_input),
        "ctc_loss": lambda: F.ctc_loss(ctc_log_probs, ctc_targets, ctc_lengths, ctc_target_lengths),
        "max_unpool2d": lambda: F.max_unpool2d(pool_out, pool_indices, 2),
        "repeat_interleave": lambda: torch.repeat_interleave(repeats, output_size=repeats_total),
        "masked_scatter": lambda: table.masked_scatter(mask, table),
        "histc": lambda: torch.histc(scores, bins=32),
        "quantile": lambda: torch.quantile(scores, quantiles),
        "nanquantile": lambda: torch.nanquantile(scores, quantiles),
        "multi_margin_loss": lambda: F.multi_margin_loss(logits, margin_targets),
        "multilabel_margin_loss": lambda: F.multilabel_margin_loss(logits, multilabel_targets),
        "bincount": lambda: torch.bincount(ids),
        "searchsorted": lambda: torch.searchsorted(edges, scores, sorter=sorter),
        "poisson": lambda: torch.poisson(scores),
        "normal": lambda: torch.normal(scores, scores),
    }


def per_call_seconds(call, calls, device):
    if device == "cuda":
        torch.cuda.synchronize()
    start = clock()
    for _ in range(calls):
        call()
    if device == "cuda":
        torch.cuda.synchronize()
    return (clock() - start) / calls


class Replay:
    """Every guarded op replaced by a stub returning its first result in the family measured."""

    def __init__(self):
        from assertscope._guard._patching import Patches, current, resolve
        from assertscope._guard.checks import PATCHES

        self.family = None
        self.results = {}
        self.patches = Patches()
        seen = set()
        for owner_path, name, _check, _names in PATCHES:
            if (owner_path, name) in seen:
                continue
            seen.add((owner_path, name))
            try:
                owner = resolve(owner_path)
                original = current(owner, name)
            except (ImportError, AttributeError):
                continue
            self.patches.replace(owner, name, self.stub(f"{owner_path}.{name}", original))

    def stub(self, key, original):
        results = self.results

        def replayed(*args, **kwargs):
            where = (key, self.family)
            if where not in results:
                results[where] = original(*args, **kwargs)
            return results[where]

        return replayed

    def undo(self):
        self.patches.undo()


class Variant:
    def __init__(self, mode):
        self.mode = mode  # "plain", "again" (unguarded both) or a guard mode

    def __enter__(self):
        self.handle = assertscope.guard(mode=self.mode) if self.mode in GUARD_MODES else None

    def __exit__(self, *exc):
        if self.handle is not None:
            self.handle.__exit__(*exc)


GUARD_MODES = ("auto", "async")


def measure(args):
    table = {}
    modes = ["plain", "again", *GUARD_MODES]
    replay = Replay() if args.kernels == "replay" else None
    try:
        for size in args.sizes:
            for name, call in families(args.device, size).items():
                if args.families and name not in args.families:
                    continue
                if replay is not None:
                    replay.family = (name, size)
                table[f"{name} [{size}]"] = measure_family(call, modes, size, args)
    finally:
        if replay is not None:
            replay.undo()
    return table


def measure_family(call, modes, size, args):
    """{plain_us, <mode>_added_us, <mode>_ratio} of one family, its variants interleaved."""
    calls = args.calls if size == "small" else max(3, args.calls // 100)
    for mode in modes:  # warm up each path once
        with Variant(mode):
            call()
    rounds = {mode: [] for mode in modes}
    for round_number in range(args.rounds):
        shift = round_number % len(modes)
        for mode in modes[shift:] + modes[:shift]:
            with Variant(mode):
                rounds[mode].append(per_call_seconds(call, calls, args.device))
    plain = rounds["plain"]
    row = {"plain_us": statistics.median(plain) * 1e6}
    for mode in modes[1:]:
        row[f"{mode}_added_us"] = statistics.median(g - p for g, p in zip(rounds[mode], plain)) * 1e6
        row[f"{mode}_ratio"] = statistics.median(g / p for g, p in zip(rounds[mode], plain))
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--sizes", nargs="+", default=["small", "large"], choices=["small", "large"])
    parser.add_argument("--families", nargs="*", help="only these op families")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=300, help="calls per measurement (small inputs; large: /100)")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (0: leave as is)")
    parser.add_argument("--clock", default="wall", choices=list(CLOCKS),
                        help="wall: elapsed time; cpu: this process's CPU time, which other processes' load "
                             "does not inflate (CPU devices only, with --threads 1)")
    parser.add_argument("--kernels", default="real", choices=["real", "replay"],
                        help="real: the ops run; replay: stubs return each op's first result, so only the "
                             "guard's own work is timed")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    global clock
    clock = CLOCKS[args.clock]
    if args.threads:
        torch.set_num_threads(args.threads)
    table = measure(args)
    if args.json:
        print(json.dumps({"device": args.device, "torch": torch.__version__, "kernels": args.kernels,
                          "table": table}, indent=1))
        return 0
    print(f"device {args.device}, torch {torch.__version__}, threads {torch.get_num_threads()}, clock {args.clock}, "
          f"kernels {args.kernels}, {args.rounds} interleaved rounds; us per call")
    print(f"{'family':34s} {'plain':>9s} {'again +us':>10s} {'default +us':>12s} {'ratio':>7s} "
          f"{'async +us':>10s} {'ratio':>7s}")
    for name, row in table.items():
        verdict = "" if not name.endswith("[small]") else (
            "  meets" if row["auto_added_us"] <= TARGET_ADDED_US else "  OVER TARGET")
        print(f"{name:34s} {row['plain_us']:9.2f} {row['again_added_us']:10.2f} "
              f"{row['auto_added_us']:12.2f} {row['auto_ratio']:7.3f} "
              f"{row['async_added_us']:10.2f} {row['async_ratio']:7.3f}{verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
