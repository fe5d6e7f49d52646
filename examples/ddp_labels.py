"""Data-parallel training where one shard holds a label past the last class.

Run with `torchrun --standalone --nproc_per_node=2 examples/ddp_labels.py` (gloo on the
CPU, nccl on GPUs). Rank 1 meets the bad label at step 3; the other rank only waits for
it in all_reduce.
"""

import os

import torch
import torch.distributed as dist
import torch.nn as nn

NUM_CLASSES = 10
BAD_RANK = int(os.environ.get("BAD_RANK", "1"))
BAD_STEP = int(os.environ.get("BAD_STEP", "3"))


def main():
    use_cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if use_cuda else "gloo")
    rank = dist.get_rank()
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0))) if use_cuda else torch.device("cpu")
    model = nn.parallel.DistributedDataParallel(nn.Linear(20, NUM_CLASSES).to(device))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(rank)
    for step in range(8):
        x = torch.randn(32, 20, generator=g)
        y = torch.randint(0, NUM_CLASSES, (32,), generator=g)
        if rank == BAD_RANK and step == BAD_STEP:
            y[7] = NUM_CLASSES                  # a label from an 11th class in this shard
        loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if rank == 0:
            print(f"step {step} loss {loss.item():.4f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    torch.manual_seed(0)  # the same numbers on every run
    main()
