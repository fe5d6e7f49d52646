"""A data-parallel job whose failing rank does not exit: one rank meets a label past the
last class at BAD_STEP, and a non-daemon background thread (here a heartbeat writer, as
metric uploaders and async checkpoint writers are) keeps its process alive after the
exception. The other ranks then wait in all_reduce until the process group times out.
KEEP_ALIVE=0 leaves the thread out: the failing rank then exits, as most do."""

import datetime
import os
import threading
import time

import torch
import torch.distributed as dist
import torch.nn as nn

NUM_CLASSES = 10
BAD_RANK = int(os.environ.get("BAD_RANK", "1"))
BAD_STEP = int(os.environ.get("BAD_STEP", "3"))
TIMEOUT_S = float(os.environ.get("PG_TIMEOUT_S", "60"))
KEEP_ALIVE = os.environ.get("KEEP_ALIVE", "1") != "0"


def heartbeat(stop):
    while not stop.wait(1.0):
        pass


def main():
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=TIMEOUT_S))
    rank = dist.get_rank()
    stop = threading.Event()
    if rank == BAD_RANK and KEEP_ALIVE:
        # Not a daemon, and never stopped once the exception below ends the main thread.
        threading.Thread(target=heartbeat, args=(stop,), name="heartbeat").start()
    model = nn.parallel.DistributedDataParallel(nn.Linear(20, NUM_CLASSES))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(rank)
    for step in range(20):
        x = torch.randn(32, 20, generator=g)
        y = torch.randint(0, NUM_CLASSES, (32,), generator=g)
        if rank == BAD_RANK and step == BAD_STEP:
            print(f"rank {rank}: bad batch at step {step} at {time.time():.3f}", flush=True)
            y[7] = NUM_CLASSES
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    stop.set()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
