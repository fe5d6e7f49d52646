#!/usr/bin/env python3
"""Checks that `assertscope lint` stays linear in the size of one file.

    python3 bench/lint/scaling.py [--assertscope PATH] [--sizes 1,2,4]

Generates, for each shape below, one Python file of each size (in MB) into a temporary
directory and times `assertscope lint` on it (median of --runs). Prints the seconds and the
ratio to the previous size: about 2.0 per doubling is linear, about 4.0 quadratic.

Shapes (each a pattern that once made some question scan the whole module):
  loss-functions   many functions that call a loss on their parameters, each called once
                   (the call sites of a parameter were found by scanning every call)
  same-name        many classes with a method of the same name called through `self`
  rebound          one name assigned over and over, read after each assignment
  samplers         many multinomial calls on softmax(x / t) with t a parameter
"""
import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\ncriterion = nn.CrossEntropyLoss()\n\n"


def loss_functions(i):
    return (
        f"def step_{i}(model, x, y, t=1.0):\n"
        f"    logits = model(x)\n"
        f"    loss = criterion(logits, y)\n"
        f"    loss2 = F.cross_entropy(logits / t, y.long())\n"
        f"    return helper_{i}(loss, y)\n\n\n"
        f"def helper_{i}(a, b):\n"
        f"    return a + F.nll_loss(a, b)\n\n\n"
        f"step_{i}(nn.Linear(4, 2), torch.randn(3, 4), torch.zeros(3).long())\n\n\n"
    )


def same_name(i):
    return (
        f"class Model{i}(nn.Module):\n"
        f"    def __init__(self, n=3):\n"
        f"        super().__init__()\n"
        f"        self.fc = nn.Linear(8, n)\n\n"
        f"    def decode(self, h):\n"
        f"        return self.fc(h)\n\n"
        f"    def forward(self, x, y):\n"
        f"        return F.cross_entropy(self.decode(x), y.view(-1))\n\n\n"
    )


def rebound(i):
    return f"probs = torch.softmax(scores_{i} / {i + 1}, dim=-1)\ntorch.multinomial(probs, 1)\n"


def samplers(i):
    return (
        f"def sample_{i}(logits, t):\n"
        f"    probs = torch.softmax(logits / t, dim=-1)\n"
        f"    return torch.multinomial(probs, 1)\n\n\n"
        f"sample_{i}(torch.randn(2, 5), 0.7)\n"
    )


SHAPES = {"loss-functions": loss_functions, "same-name": same_name, "rebound": rebound, "samplers": samplers}


def generate(shape, megabytes):
    parts = [HEADER]
    size = len(HEADER)
    i = 0
    while size < megabytes * 1_000_000:
        block = SHAPES[shape](i)
        parts.append(block)
        size += len(block)
        i += 1
    return "".join(parts)


def timed(binary, path, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run([binary, "lint", "--exit-zero", "--output-format", "json", str(path)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            sys.exit(f"lint failed on {path}: {proc.stderr.decode()[-500:]}")
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--assertscope", default=str(REPO / "target/release/assertscope"))
    parser.add_argument("--sizes", default="1,2,4")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        for shape in SHAPES:
            previous = None
            row = []
            for mb in sizes:
                path = Path(tmp) / f"{shape}-{mb}.py"
                path.write_text(generate(shape, mb))
                seconds = timed(args.assertscope, path, args.runs)
                ratio = f" (x{seconds / previous:.2f})" if previous else ""
                row.append(f"{mb:g} MB {seconds:.3f}s{ratio}")
                previous = seconds
            print(f"{shape:15} " + "  ".join(row))


if __name__ == "__main__":
    main()
