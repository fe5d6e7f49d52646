"""The guard in torch.compile'd models: Dynamo graph and graph-break counts
(torch._dynamo.explain) and the number of compiled-in checks, without and with the guard,
and whether the compiled loss and gradients are bit-identical.

    python bench/compiled/explain_counts.py [--device cpu|cuda]
"""

import argparse
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(ROOT, "tests", "python")]
import assertscope  # noqa: E402
from assertscope._guard import compiled  # noqa: E402
from test_guard_compiled import LookupModel, TaggerLM, lookup_batch  # noqa: E402  (the models of the compiled-guard tests)


class TransformerLM(nn.Module):
    def __init__(self, vocab=100, dim=32):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(16, dim)
        self.body = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, 4, 64, batch_first=True), 2)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids, labels):
        pos = torch.arange(ids.shape[1], device=ids.device)
        h = self.body(self.tok(ids) + self.pos(pos))
        return F.cross_entropy(self.head(h).flatten(0, 1), labels.flatten(), ignore_index=-100)


def counts(model, *args):
    """(graphs, graph breaks, [checks per graph]) as torch._dynamo.explain sees the model."""
    explained = torch._dynamo.explain(model)(*args)
    return explained.graph_count, explained.graph_break_count, [compiled.guarded_ops_in(g) for g in explained.graphs]


def run(model, *args):
    torch._dynamo.reset()
    loss = torch.compile(model)(*args)
    loss.backward()
    return loss.detach(), [p.grad.clone() for p in model.parameters()]


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--device", default="cpu")
device = parser.parse_args().device
g = torch.Generator().manual_seed(0)
cases = {
    "TaggerLM (tests)": (lambda: TaggerLM(), (torch.randint(0, 9, (4, 6), generator=g), torch.randint(0, 3, (4, 6), generator=g), 0)),
    "TransformerLM": (lambda: TransformerLM(), (torch.randint(0, 100, (4, 16), generator=g), torch.randint(0, 100, (4, 16), generator=g))),
    "LookupModel (tests)": (lambda: LookupModel(), lookup_batch()),
}
for name, (make, args) in cases.items():
    args = tuple(a.to(device) if torch.is_tensor(a) else a for a in args)
    res = {}
    for guarded in (False, True):
        torch.manual_seed(0)
        torch._dynamo.reset()
        if guarded:
            assertscope.guard(mode="sync")
        m = make().to(device)
        c = counts(m, *args)
        torch.manual_seed(0)
        m = make().to(device)
        res[guarded] = (c, run(m, *args))
        if guarded:
            assertscope.unguard()
    (c0, (l0, g0)), (c1, (l1, g1)) = res[False], res[True]
    same = torch.equal(l0, l1) and all(torch.equal(a, b) for a, b in zip(g0, g1))
    print(f"{name}: unguarded graphs/breaks/checks {c0}, guarded {c1}, loss+grads bit-identical: {same}")
