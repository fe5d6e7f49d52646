"""`assertscope explain` on real PyTorch errors: buggy scripts run on the CPU with real
torch, their real output (stdout and stderr together, as a user pipes it) explained."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import assertscope_binary

torch = pytest.importorskip("torch")





def run_script(tmp_path, source, args=(), env=None):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(source))
    proc = subprocess.run(
        [sys.executable, str(script), *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        timeout=300,
    )
    assert proc.returncode != 0, proc.stdout.decode()
    return script, proc.stdout


def explain(log_bytes):
    proc = subprocess.run([assertscope_binary(), "explain", "--json"], input=log_bytes, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr.decode()
    return json.loads(proc.stdout), proc.returncode


def line_of(script, needle):
    for number, line in enumerate(script.read_text().splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {script}")


CASES = [
    (
        "cross_entropy_label_equals_num_classes",
        """
        import torch, torch.nn as nn
        model = nn.Linear(8, 10)
        x = torch.randn(16, 8)
        y = torch.arange(1, 17) % 10 + 1          # labels 1..10 for 10 classes
        loss = nn.CrossEntropyLoss()(model(x), y)
        """,
        "target-out-of-range", "cross_entropy", "loss = nn.CrossEntropyLoss()",
    ),
    (
        "embedding_past_the_table",
        """
        import torch, torch.nn as nn
        class LM(nn.Module):
            def __init__(self):
                super().__init__()
                self.tok = nn.Embedding(100, 16)
            def forward(self, ids):
                return self.tok(ids).mean()
        ids = torch.tensor([[1, 5, 100, 7]])
        LM()(ids)
        """,
        "embedding-index-out-of-range", "embedding", "return self.tok(ids)",
    ),
    (
        "gather_past_the_scores",
        """
        import torch
        scores = torch.randn(4, 32)
        slots = torch.randint(0, 40, (4, 8))
        picked = scores.gather(1, slots)
        """,
        "index-out-of-bounds", "gather", "picked = scores.gather",
    ),
    (
        "index_select_after_a_crop",
        """
        import torch
        feats = torch.randn(50, 3)
        neighbours = torch.tensor([3, 49, 60])
        out = feats.index_select(0, neighbours)
        """,
        "index-out-of-bounds", "index_select", "out = feats.index_select",
    ),
    (
        "tensor_indexing_positions",
        """
        import torch
        pe = torch.randn(64, 8)
        positions = torch.arange(96)
        h = pe[positions]
        """,
        "index-out-of-bounds", "index", "h = pe[positions]",
    ),
    (
        "bce_on_logits",
        """
        import torch, torch.nn as nn
        logits = torch.randn(8) * 3
        loss = nn.BCELoss()(logits, torch.ones(8))
        """,
        "bce-input-range", "binary_cross_entropy", "loss = nn.BCELoss()",
    ),
    (
        "multinomial_with_temperature_zero",
        """
        import torch
        logits = torch.randn(1, 20)
        probs = torch.softmax(logits / 0.0, dim=-1)
        token = torch.multinomial(probs, 1)
        """,
        "invalid-probabilities", "multinomial", "token = torch.multinomial",
    ),
    (
        "one_hot_with_void_label",
        """
        import torch, torch.nn.functional as F
        mask = torch.tensor([[0, 1, 2], [255, 1, 0]])
        onehot = F.one_hot(mask, num_classes=3)
        """,
        "target-out-of-range", "one_hot", "onehot = F.one_hot",
    ),
    (
        "targets_n_by_1",
        """
        import torch, torch.nn.functional as F
        y = torch.randint(0, 3, (8, 1))
        loss = F.cross_entropy(torch.randn(8, 3), y)
        """,
        "target-shape", "cross_entropy", "loss = F.cross_entropy",
    ),
    (
        "int32_targets",
        """
        import numpy as np, torch, torch.nn.functional as F
        y = torch.from_numpy(np.array([0, 1, 2, 1], dtype=np.int32))
        loss = F.nll_loss(torch.randn(4, 3).log_softmax(1), y)
        """,
        "target-dtype", "nll_loss", "loss = F.nll_loss",
    ),
    (
        "flatten_folds_the_batch",
        """
        import torch, torch.nn.functional as F
        x = torch.randn(50, 16, 4, 4)
        logits = torch.nn.Linear(16 * 5 * 5, 10)(x.view(-1, 16 * 5 * 5))
        loss = F.cross_entropy(logits, torch.zeros(50, dtype=torch.long))
        """,
        "batch-size-mismatch", "cross_entropy", "loss = F.cross_entropy",
    ),
    (
        "batchnorm_last_batch_of_one",
        """
        import torch, torch.nn as nn
        net = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8)).train()
        out = net(torch.randn(1, 4))
        """,
        "batchnorm-single-sample", "batch_norm", "out = net(",
    ),
    (
        "ctc_lengths_in_raw_frames",
        """
        import torch, torch.nn.functional as F
        log_probs = torch.randn(25, 2, 12).log_softmax(2)
        targets = torch.randint(1, 12, (2, 10))
        loss = F.ctc_loss(log_probs, targets, torch.tensor([100, 100]), torch.tensor([10, 10]))
        """,
        "ctc-loss", "ctc_loss", "loss = F.ctc_loss",
    ),
    (
        "reduction_over_no_predictions",
        """
        import torch
        ious = torch.empty(0, 5)
        best, idx = ious.max(dim=0)
        """,
        "empty-tensor", "max", "best, idx = ious.max",
    ),
]


@pytest.mark.parametrize("name,source,cause,op,line_text", CASES, ids=[c[0] for c in CASES])
def test_real_error_is_explained(tmp_path, name, source, cause, op, line_text):
    script, log = run_script(tmp_path, source)
    report, code = explain(log)
    assert code == 0
    root = report["diagnoses"][0]
    assert (root["cause"], root["op"]) == (cause, op), log.decode()
    assert root["location"]["file"] == str(script)
    assert root["location"]["line"] == line_of(script, line_text)
    assert root["confidence"] == "high"


def test_divergence_before_a_range_check_is_nan(tmp_path):
    script, log = run_script(tmp_path, """
        import torch, torch.nn.functional as F
        w = torch.tensor([1.0], requires_grad=True)
        for step in range(3):
            p = torch.sigmoid(w * 1e30) * float("nan") if step == 2 else torch.sigmoid(w)
            print(f"step {step} | loss {float('nan') if step == 2 else 0.69:.4f} | grad_norm {'inf' if step else 1.0}")
            loss = F.binary_cross_entropy(p, torch.ones(1))
        """)
    report, _ = explain(log)
    root = report["diagnoses"][0]
    assert root["cause"] == "nan-inf"
    assert any(e["kind"] == "divergence" for e in root["evidence"])


def test_dataloader_worker_error_points_into_the_dataset(tmp_path):
    script, log = run_script(tmp_path, """
        import torch
        from torch.utils.data import DataLoader, Dataset
        LABELS = {"sports": 0, "politics": 1}
        class News(Dataset):
            rows = [{"category": "sports"}, {"category": "Sports "}] * 8
            def __len__(self):
                return len(self.rows)
            def __getitem__(self, i):
                label = LABELS[self.rows[i]["category"]]
                return torch.zeros(3), label
        if __name__ == "__main__":
            for x, y in DataLoader(News(), batch_size=4, num_workers=2):
                pass
        """)
    report, code = explain(log)
    root = report["diagnoses"][0]
    assert (root["cause"], code) == ("none", 1)
    assert root["location"]["line"] == line_of(script, "label = LABELS[")


def test_chained_exception_keeps_the_original_cause(tmp_path):
    script, log = run_script(tmp_path, """
        import torch, torch.nn.functional as F
        def loss_fn(logits, y):
            try:
                return F.cross_entropy(logits, y)
            except IndexError as e:
                raise RuntimeError("loss failed on batch 3") from e
        loss_fn(torch.randn(4, 3), torch.tensor([0, 1, 2, 3]))
        """)
    report, _ = explain(log)
    root = report["diagnoses"][0]
    assert root["cause"] == "target-out-of-range"
    assert root["location"]["line"] == line_of(script, "return F.cross_entropy")


def test_torchrun_job_names_the_failing_rank(tmp_path):
    torchrun = Path(sys.executable).with_name("torchrun")
    if not torchrun.exists():
        pytest.fail("torchrun is not installed next to the Python interpreter")
    script = tmp_path / "ddp_train.py"
    script.write_text(textwrap.dedent("""
        import os, torch, torch.distributed as dist, torch.nn as nn
        dist.init_process_group("gloo")
        rank = dist.get_rank()
        model = nn.parallel.DistributedDataParallel(nn.Linear(8, 5))
        for step in range(4):
            x = torch.randn(16, 8)
            y = torch.randint(0, 5, (16,))
            if rank == 1 and step == 2:
                y[3] = 5                      # one label past the 5 classes
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
        dist.destroy_process_group()
        """))
    proc = subprocess.run(
        [str(torchrun), "--standalone", "--nproc_per_node=2", str(script)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"},
    )
    assert proc.returncode != 0
    report, _ = explain(proc.stdout)
    root = report["diagnoses"][0]
    assert (root["cause"], root["rank"]) == ("target-out-of-range", 1), proc.stdout.decode()[-3000:]
    assert root["location"]["line"] == line_of(script, "loss = nn.functional.cross_entropy")


def test_ipython_traceback(tmp_path):
    ipython = Path(sys.executable).with_name("ipython")
    if not ipython.exists():
        pytest.fail("ipython is not installed next to the Python interpreter (tests/requirements.txt)")
    cell = "import torch, torch.nn.functional as F\nlogits = torch.randn(4, 5)\nloss = F.cross_entropy(logits, torch.tensor([1, 2, 3, 5]))\n"
    proc = subprocess.run([str(ipython), "--colors=Linux", "--no-banner", "-c", cell], cwd=tmp_path,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300,
                          env={**os.environ, "TERM": "xterm-256color"})
    report, _ = explain(proc.stdout)
    root = report["diagnoses"][0]
    assert root["cause"] == "target-out-of-range", proc.stdout.decode()
    assert (root["location"]["file"], root["location"]["line"]) == ("Cell In[1]", 3)
    assert root["op"] == "cross_entropy"
