"""Overhead of the guard: median training-step time with the guard vs without, on a small
transformer LM (embedding + cross_entropy with -100 padding), a CNN with BatchNorm and an
index-heavy message-passing GNN (index_select / index_add_ / scatter_add_ along edges,
advanced indexing of seed nodes), measured in the same run, interleaved (plain, guard,
detect_anomaly, plain, ...) so that machine noise hits every variant alike.
torch.autograd.detect_anomaly on the same models is printed as the reference.
Targets: guard <= 1.02x plain on the LM and the CNN, <= 1.05x on the GNN.

    python bench/guard/overhead.py                       # CPU, guard in its default mode
    python bench/guard/overhead.py --device cuda --mode async
    python bench/guard/overhead.py --device cuda --mode sync --blocking
    python bench/guard/overhead.py --device cuda --variants plain guard-async guard-sync --blocking

--blocking adds a CUDA_LAUNCH_BLOCKING=1 measurement, run in a subprocess (the variable must
be set before CUDA starts) and compared with the plain median of this process.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
clock = time.perf_counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import assertscope  # noqa: E402


class TinyLM(nn.Module):
    def __init__(self, vocab, dim, layers, length):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Embedding(length, dim)
        layer = nn.TransformerEncoderLayer(dim, 4, dim * 4, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device)
        mask = nn.Transformer.generate_square_subsequent_mask(ids.shape[1], device=ids.device)
        h = self.encoder(self.tokens(ids) + self.positions(positions), mask=mask, is_causal=True)
        return self.head(h)


def lm_workload(device, size):
    vocab, dim, layers, length, batch = (1000, 128, 2, 64, 16) if size == "small" else (32000, 512, 6, 256, 16)
    model = TinyLM(vocab, dim, layers, length).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, vocab, (batch, length), device=device)
    labels = ids.roll(-1, 1)
    labels[:, -8:] = -100  # padding, ignored by the loss

    def step():
        logits = model(ids)
        loss = F.cross_entropy(logits.view(-1, vocab), labels.view(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss

    return step


def cnn_workload(device, size):
    width, batch, side = (32, 32, 32) if size == "small" else (128, 64, 64)
    model = nn.Sequential(
        nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
        nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(width, 2 * width, 3, padding=1), nn.BatchNorm2d(2 * width), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * width, 10),
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(batch, 3, side, side, device=device)
    labels = torch.randint(0, 10, (batch,), device=device)

    def step():
        loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss

    return step


class MessagePassing(nn.Module):
    """One graph convolution: gather the source nodes' features along the edges
    (index_select), transform them, add them up at the target nodes (index_add_), normalise
    by degree (scatter_add_ of ones)."""

    def __init__(self, dim):
        super().__init__()
        self.message = nn.Linear(dim, dim)
        self.update = nn.Linear(2 * dim, dim)

    def forward(self, x, edges):
        source, target = edges[0], edges[1]
        messages = self.message(x.index_select(0, source))
        summed = torch.zeros_like(x).index_add_(0, target, messages)
        degree = torch.zeros(x.shape[0], device=x.device).scatter_add_(0, target, torch.ones_like(target, dtype=x.dtype))
        mean = summed / degree.clamp(min=1).unsqueeze(1)
        return torch.relu(self.update(torch.cat([x, mean], dim=1)))


def gnn_workload(device, size):
    """Node classification on a random graph, mini-batches of seed nodes: index-heavy (a
    dozen guarded index calls per step on small tensors: a launch-bound workload)."""
    nodes, edges, dim, classes, layers, batch = (2000, 8000, 32, 7, 3, 256) if size == "small" else (100_000, 1_000_000, 128, 40, 3, 4096)
    generator = torch.Generator().manual_seed(0)
    features = torch.randn(nodes, dim, generator=generator).to(device)
    edge_index = torch.randint(0, nodes, (2, edges), generator=generator).to(device)
    labels = torch.randint(0, classes, (nodes,), generator=generator).to(device)
    embed = nn.Embedding(nodes, dim).to(device)  # a learned id embedding, as node2vec-style models have
    convs = nn.ModuleList(MessagePassing(dim) for _ in range(layers)).to(device)
    head = nn.Linear(dim, classes).to(device)
    params = [*embed.parameters(), *convs.parameters(), *head.parameters()]
    optimizer = torch.optim.Adam(params, lr=1e-3)
    node_ids = torch.arange(nodes, device=device)

    def step():
        seeds = torch.randint(0, nodes, (batch,), device=device)
        h = features + embed(node_ids)
        for conv in convs:
            h = conv(h, edge_index)
        logits = head(h[seeds])  # advanced indexing of the seed nodes
        loss = F.cross_entropy(logits, labels[seeds])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss

    return step


WORKLOADS = {"lm": lm_workload, "cnn": cnn_workload, "gnn": gnn_workload}


class Variant:
    """How a step runs: plain, under the guard, or under detect_anomaly."""

    def __init__(self, name, mode):
        self.name = name
        self.mode = mode

    def __enter__(self):
        if self.name.startswith("guard"):
            # "guard" uses --mode; "guard-sync" and "guard-async" name their mode.
            mode = self.name.partition("-")[2] or self.mode
            self.context = assertscope.guard(mode=mode)
        elif self.name == "anomaly":
            self.context = torch.autograd.detect_anomaly(check_nan=True)
            self.context.__enter__()
        else:
            self.context = None
        return self

    def __exit__(self, *exc):
        if self.name.startswith("guard"):
            self.context.__exit__(*exc)
        elif self.context is not None:
            self.context.__exit__(*exc)


def timed_steps(step, count, device):
    times = []
    for _ in range(count):
        if device == "cuda":
            torch.cuda.synchronize()
        start = clock()
        step()
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(clock() - start)
    return times


def measure(args, variants):
    """{workload: {variant: (median seconds per step, median of per-round ratios to plain)}}.

    Variants alternate every round (rotated, one untimed step after each switch) and each
    round's ratio compares steps taken moments apart, so load from other processes on a
    shared machine cancels out instead of landing on one variant.
    """
    results = {}
    for name in args.workloads:
        torch.manual_seed(0)
        step = WORKLOADS[name](args.device, args.size)
        for _ in range(args.warmup):
            step()
        rounds = {v.name: [] for v in variants}
        for round_number in range(args.rounds):
            shift = round_number % len(variants)
            for variant in variants[shift:] + variants[:shift]:
                with variant:
                    step()
                    rounds[variant.name].append(statistics.median(timed_steps(step, args.steps, args.device)))
        plain = rounds.get("plain")
        results[name] = {
            v: (
                statistics.median(times),
                statistics.median(t / p for t, p in zip(times, plain)) if plain else None,
            )
            for v, times in rounds.items()
        }
    return results


def blocking_medians(args):
    """Runs this script in a subprocess with CUDA_LAUNCH_BLOCKING=1, plain steps only."""
    command = [sys.executable, os.path.abspath(__file__), "--variants", "plain", "--json", "--device", args.device,
               "--size", args.size, "--rounds", str(args.rounds), "--steps", str(args.steps), "--warmup", str(args.warmup),
               "--workloads", *args.workloads]
    env = dict(os.environ, CUDA_LAUNCH_BLOCKING="1")
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    return {name: medians["plain"][0] for name, medians in json.loads(out)["medians"].items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--mode", default="auto", choices=["auto", "sync", "async"], help="guard mode")
    parser.add_argument("--size", default="small", choices=["small", "realistic"])
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    parser.add_argument("--variants", nargs="+", default=["plain", "guard", "anomaly"], choices=["plain", "guard", "guard-sync", "guard-async", "anomaly"])
    parser.add_argument("--rounds", type=int, default=40, help="interleaved rounds")
    parser.add_argument("--steps", type=int, default=3, help="timed steps per variant per round")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: leave as is)")
    parser.add_argument("--blocking", action="store_true", help="also measure CUDA_LAUNCH_BLOCKING=1 (subprocess)")
    parser.add_argument("--clock", default="wall", choices=list(CLOCKS),
                        help="wall: elapsed time; cpu: this process's CPU time, which other processes' load "
                             "does not inflate (CPU devices only, with --threads 1)")
    parser.add_argument("--json", action="store_true", help="print the medians as JSON")
    args = parser.parse_args(argv)
    global clock
    clock = CLOCKS[args.clock]
    if args.threads:
        torch.set_num_threads(args.threads)
    variants = [Variant(name, args.mode) for name in args.variants]
    medians = measure(args, variants)
    blocking = blocking_medians(args) if args.blocking else None
    if args.json:
        print(json.dumps({"device": args.device, "mode": args.mode, "size": args.size, "medians": medians, "blocking": blocking}))
        return 0
    print(f"device {args.device}, guard mode {args.mode}, size {args.size}, torch {torch.__version__}, clock {args.clock}, "
          f"{args.rounds} rounds x {args.steps} steps per variant, threads {torch.get_num_threads()}")
    for name, by_variant in medians.items():
        plain = by_variant["plain"][0] if "plain" in by_variant else None
        row = [f"{name:4s}"]
        for variant, (median, ratio) in by_variant.items():
            row.append(f"{variant} {median * 1000:.2f} ms" + (f" ({ratio:.3f}x)" if variant != "plain" and ratio else ""))
        if blocking and plain:
            row.append(f"CUDA_LAUNCH_BLOCKING {blocking[name] * 1000:.2f} ms ({blocking[name] / plain:.3f}x)")
        print("  ".join(row))
    print("ratios: median over rounds of (variant step time / plain step time in the same round)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
