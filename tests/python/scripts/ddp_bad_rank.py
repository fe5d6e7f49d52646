"""Two gloo ranks; rank 1 has a label outside the classes."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)
model = nn.parallel.DistributedDataParallel(nn.Linear(4, 3))
y = torch.tensor([0, 1, 2, 3 if rank == 1 else 2])
loss = F.cross_entropy(model(torch.randn(4, 4)), y)
loss.backward()
dist.barrier()
print("rank", rank, "done", flush=True)
dist.destroy_process_group()
