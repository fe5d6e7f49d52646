"""A training loop prepared by accelerate, for 2 CPU processes:

    accelerate launch --multi_gpu --num_processes 2 accelerate_loop.py [clean|bad-label]

bad-label plants class 3 (of 3) at dataset index 13. A clean run prints each rank's
final weights' checksum."""

import sys

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

mode = sys.argv[1]
accelerator = Accelerator(cpu=True)
torch.manual_seed(0)
g = torch.Generator().manual_seed(0)
x = torch.randn(32, 4, generator=g)
y = torch.randint(0, 3, (32,), generator=g)
if mode == "bad-label":
    y[13] = 3
model = torch.nn.Linear(4, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(TensorDataset(x, y), batch_size=4)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for inputs, labels in loader:
    loss = torch.nn.functional.cross_entropy(model(inputs), labels)
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
accelerator.wait_for_everyone()
checksum = float(sum(p.detach().double().sum() for p in model.parameters()))
# One write per line: both ranks share stdout, and print() writes its pieces separately when
# Python is unbuffered (PYTHONUNBUFFERED), so the two lines could interleave mid-line.
sys.stdout.write(f"rank {accelerator.process_index} checksum {checksum}\n")
sys.stdout.flush()
