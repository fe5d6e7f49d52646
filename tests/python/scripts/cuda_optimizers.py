"""A small language-model training loop written for a CUDA machine, the way current scripts
are written, run once per configuration named on the command line:

    python cuda_optimizers.py [--bad-label-at ROW] OPTIMIZER:AMP...

OPTIMIZER: adam, adamw, adam-fused, adamw-fused, adamw-foreach, adam-capturable, sgd,
sgd-fused, rmsprop, nadam, radam, adagrad. AMP: none, autocast (torch.autocast("cuda") +
torch.amp.GradScaler("cuda")), bf16 (torch.autocast(device_type="cuda", dtype=torch.bfloat16)),
cuda-amp (the older torch.cuda.amp.autocast + torch.cuda.amp.GradScaler). --bad-label-at puts
a label of 37 (the model has 32 classes) in that row of the data set (batches of 16, in order).
"""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--bad-label-at", type=int)
parser.add_argument("configurations", nargs="+")
arguments = parser.parse_args()

device = torch.device("cuda")


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(32, 16)
        self.mix = nn.Linear(16, 16)
        self.head = nn.Linear(16, 32)

    def forward(self, ids):
        return self.head(torch.relu(self.mix(self.embed(ids))))


def train(optimizer_name, amp):
    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    tokens = torch.randint(0, 32, (64, 12))
    labels = torch.randint(0, 32, (64, 12))
    if arguments.bad_label_at is not None:
        labels[arguments.bad_label_at, 3] = 37
    loader = DataLoader(TensorDataset(tokens, labels), batch_size=16, pin_memory=True)
    model = TinyLM().to(device)
    before = [p.detach().clone() for p in model.parameters()]
    params = model.parameters()
    optimizer = {
        "adam": lambda: torch.optim.Adam(params, lr=1e-3),
        "adamw": lambda: torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01),
        "adam-fused": lambda: torch.optim.Adam(params, lr=1e-3, fused=True),
        "adamw-fused": lambda: torch.optim.AdamW(params, lr=1e-3, fused=True),
        "adamw-foreach": lambda: torch.optim.AdamW(params, lr=1e-3, foreach=True),
        "adam-capturable": lambda: torch.optim.Adam(params, lr=1e-3, capturable=True),
        "sgd": lambda: torch.optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True),
        "sgd-fused": lambda: torch.optim.SGD(params, lr=0.1, momentum=0.9, fused=True),
        "rmsprop": lambda: torch.optim.RMSprop(params, lr=1e-3),
        "nadam": lambda: torch.optim.NAdam(params, lr=1e-3),
        "radam": lambda: torch.optim.RAdam(params, lr=1e-3),
        "adagrad": lambda: torch.optim.Adagrad(params, lr=1e-2),
    }[optimizer_name]()

    if amp == "none":
        autocast, scaler = (lambda: torch.autocast("cuda", enabled=False)), None
    elif amp == "autocast":
        autocast, scaler = (lambda: torch.autocast("cuda")), torch.amp.GradScaler("cuda")
    elif amp == "bf16":
        autocast, scaler = (lambda: torch.autocast(device_type="cuda", dtype=torch.bfloat16)), torch.amp.GradScaler()
    elif amp == "cuda-amp":
        autocast, scaler = torch.cuda.amp.autocast, torch.cuda.amp.GradScaler()
    else:
        raise SystemExit(f"unknown AMP flavour {amp}")

    for step, (ids, target) in enumerate(loader):
        ids, target = ids.to(device, non_blocking=True), target.cuda(non_blocking=True)
        with autocast():
            logits = model(ids)
            loss = F.cross_entropy(logits.view(-1, 32), target.view(-1))
        optimizer.zero_grad(set_to_none=True)
        if scaler is None:
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        else:
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
        print(f"step {step} loss {loss.item():.4f}")
        if step == 1:
            break

    assert all(state and all(torch.isfinite(v).all() for v in state.values() if torch.is_tensor(v))
               for state in optimizer.state.values()), "the optimizer kept no state"
    assert any(not torch.equal(old, new) for old, new in zip(before, model.parameters())), "no step was taken"
    print("ok", optimizer_name, amp, next(model.parameters()).device)


for configuration in arguments.configurations:
    train(*configuration.split(":"))
