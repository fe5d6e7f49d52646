#!/usr/bin/env python3
"""The origin analysis on a 5,000-line multi-module training project, against `assertscope
lint` on the same project, in the same run.

    python3 bench/origin/speed.py [--bin PATH] [--lines 5000] [--runs 7] [--keep DIR]

Generates a realistic project (a package of datasets, parsing helpers, label maps,
transforms, models and utilities, and a training script), writes the guard report of a
failure in its training step whose bad label was made four modules away, and times
`assertscope origin REPORT` twice (with the guard's runtime stack, and without it, where
the analysis searches the project for callers) and `assertscope lint PROJECT`. Prints the
median wall times, the ratio origin / lint, and whether the analysis took at most 1 s.
Measure with the fully optimised build (`cargo build --profile dist`).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

DATASET = '''"""Dataset {n}: reviews read from a CSV export."""
import csv
import io

import torch
from torch.utils.data import Dataset

from .labels import label_of_{n}
from ..utils.text import tokenize_{n}, pad_{n}


class Reviews{n}(Dataset):
    def __init__(self, text, max_len=32):
        self.rows = list(csv.DictReader(io.StringIO(text)))
        self.max_len = max_len
        self.labels = [label_of_{n}(row["stars"]) for row in self.rows]
        self.tokens = [pad_{n}(tokenize_{n}(row["text"]), max_len) for row in self.rows]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        ids = torch.tensor(self.tokens[i], dtype=torch.long)
        label = self.labels[i]
        return {{"input_ids": ids, "labels": label}}
'''

LABELS = '''"""Label maps of dataset {n}."""
STARS_{n} = {{"1": 0, "2": 0, "3": 1, "4": 2, "5": 2}}


def label_of_{n}(stars):
    return STARS_{n}.get(stars.strip(), -1)
'''

TEXT = '''"""Tokenising and padding, variant {n}."""


def tokenize_{n}(text):
    return [ord(c) % 97 for c in text.lower() if c.isalnum()]


def pad_{n}(ids, length, value=0):
    ids = ids[:length]
    return ids + [value] * (length - len(ids))
'''

MODEL = '''"""Model {n}: an embedding bag classifier."""
import torch
import torch.nn as nn


class Classifier{n}(nn.Module):
    def __init__(self, vocab, dim, classes):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.hidden = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Dropout(0.1))
        self.head = nn.Linear(dim, classes)

    def forward(self, input_ids):
        h = self.embed(input_ids).mean(1)
        return self.head(self.hidden(h))
'''

FILLER = '''

def helper_{n}_{k}(values, scale=1.0):
    """Helper {k} of module {n}."""
    total = 0.0
    for i, v in enumerate(values):
        if i % 2 == 0:
            total += v * scale
        else:
            total -= v / (scale + 1)
    result = [v * total for v in values]
    return result
'''

TRAIN = '''"""Training script."""
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from project.data.dataset_0 import Reviews0
from project.models.model_0 import Classifier0

CSV = "text,stars\\n" + "\\n".join(f"review {{i}},{{1 + i % 5}}" for i in range(200)) + "\\nbad,6"


def train_step(model, batch, opt):
    logits = model(batch["input_ids"])
    labels = batch["labels"]
    loss = F.cross_entropy(logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


def main():
    loader = DataLoader(Reviews0(CSV), batch_size=16, shuffle=True)
    model = Classifier0(97, 32, 3)
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(2):
        for batch in loader:
            train_step(model, batch, opt)


if __name__ == "__main__":
    main()
'''


def generate(root: Path, lines: int) -> int:
    """Writes the project under `root`; returns its number of lines."""
    pkg = root / "project"
    for sub in ("", "data", "models", "utils"):
        (pkg / sub).mkdir(parents=True, exist_ok=True)
        (pkg / sub / "__init__.py").write_text("")
    files = {root / "train.py": TRAIN}
    n = 0
    while sum(t.count("\n") for t in files.values()) < lines:
        files[pkg / "data" / f"dataset_{n}.py"] = DATASET.format(n=n)
        files[pkg / "data" / f"labels.py"] = files.get(pkg / "data" / "labels.py", "") + LABELS.format(n=n)
        files[pkg / "utils" / "text.py"] = files.get(pkg / "utils" / "text.py", "") + TEXT.format(n=n)
        files[pkg / "models" / f"model_{n}.py"] = MODEL.format(n=n) + "".join(FILLER.format(n=n, k=k) for k in range(8))
        n += 1
    for path, text in files.items():
        path.write_text(text)
    return sum(t.count("\n") for t in files.values())


def report(root: Path, with_stack: bool) -> dict:
    train = str(root / "train.py")
    runtime = {"version": 1, "frames": [{"file": train, "line": 15, "function": "train_step", "holders": ["labels"]}]}
    if with_stack:
        runtime["frames"] += [{"file": train, "line": 28, "function": "main"}, {"file": train, "line": 32, "function": "<module>"}]
    return {
        "schema": "assertscope.guard-report/1", "time": 1.0, "host": "bench", "pid": 1, "rank": None,
        "local_rank": None, "world_size": None, "argv": ["python", "train.py"],
        "diagnosis": {
            "cause": "target-out-of-range", "title": "class target out of range", "confidence": "high",
            "op": "cross_entropy", "location": {"file": "train.py", "line": 15, "function": "train_step", "code": None},
            "rank": None, "evidence": [], "values": {"distinct_bad_values": [-1]}, "explanation": "", "fix": "",
            "checklist_step": 2, "origin": [],
        },
        "runtime": runtime,
    }


def timed(argv, cwd, runs):
    times = []
    out = None
    for _ in range(runs):
        start = time.perf_counter()
        out = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=str(REPO / "target" / "dist" / "assertscope"))
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--keep", help="generate the project in this directory and keep it")
    args = parser.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="origin-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    lines = generate(root, args.lines)
    results = {}
    for name, stack in (("origin (runtime stack)", True), ("origin (callers searched)", False)):
        path = root / f"report-{int(stack)}.json"
        path.write_text(json.dumps(report(root, stack)))
        seconds, out = timed([args.bin, "origin", str(path)], root, args.runs)
        diagnosis = json.loads(out.stdout)["diagnosis"]
        made = [f"{Path(o['file']).name}:{o['line']}" for o in diagnosis["origin"] if o["role"] == "made"]
        results[name] = seconds
        print(f"{name:28} {seconds * 1000:8.1f} ms   made here: {made}", flush=True)
    lint, _ = timed([args.bin, "lint", "--exit-zero", str(root)], root, args.runs)
    print(f"{'lint (same project)':28} {lint * 1000:8.1f} ms")
    print(f"\nproject: {lines} lines in {sum(1 for _ in root.rglob('*.py'))} files")
    worst = max(results.values())
    print(f"origin / lint: {worst / lint:.2f}x; origin {'within' if worst <= 1.0 else 'OVER'} 1 s ({worst:.3f} s)")


if __name__ == "__main__":
    sys.exit(main())
