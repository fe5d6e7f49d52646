"""Ray Train data-parallel training where one worker's shard holds a label past the last class.

Each of the 2 workers (gloo on the CPU) reads its own shard; the sample at index 77 of
rank 1's shard has the label 5 in a 5-way head. Rank 1 fails at its fifth batch; rank 0
only waits for it in the gradients' all_reduce.

    ray start --head --num-cpus 2            # the cluster, started separately
    assertscope run -- python examples/ray_labels.py

RAY_ADDRESS names the cluster (without it, a cluster running on this machine, else a new
local one, as `ray.init()` finds them); BAD_RANK=-1 trains without the bad label;
STORAGE_PATH is where Ray Train keeps the run (else ~/ray_results).
"""

import os

import ray
import ray.train
import torch
import torch.nn as nn
from ray.train import ScalingConfig
from ray.train.torch import TorchTrainer, prepare_model
from torch.utils.data import DataLoader, Dataset

NUM_CLASSES = 5
SHARD = 96
BAD_RANK = int(os.environ.get("BAD_RANK", "1"))
BAD_INDEX = 77


class Shard(Dataset):
    """One worker's part of the data: features and labels made from its rank."""

    def __init__(self, rank):
        g = torch.Generator().manual_seed(rank)
        self.features = torch.randn(SHARD, 8, generator=g)
        self.labels = torch.randint(0, NUM_CLASSES, (SHARD,), generator=g).tolist()
        if rank == BAD_RANK:
            self.labels[BAD_INDEX] = NUM_CLASSES  # a label from a sixth class

    def __len__(self):
        return SHARD

    def __getitem__(self, i):
        return self.features[i], self.labels[i]


def train_loop(config):
    torch.manual_seed(0)
    rank = ray.train.get_context().get_world_rank()
    loader = DataLoader(Shard(rank), batch_size=16)
    model = prepare_model(nn.Linear(8, NUM_CLASSES))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(config["epochs"]):
        total = 0.0
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        weights = [round(p.detach().sum().item(), 6) for p in model.parameters()]
        ray.train.report({"epoch": epoch, "loss": round(total, 6), "weights": weights})


def main():
    ray.init(address=os.environ.get("RAY_ADDRESS"))
    trainer = TorchTrainer(
        train_loop,
        train_loop_config={"epochs": int(os.environ.get("EPOCHS", "2"))},
        scaling_config=ScalingConfig(num_workers=2, use_gpu=False, resources_per_worker={"CPU": 1}),
        run_config=ray.train.RunConfig(storage_path=os.environ.get("STORAGE_PATH")),
    )
    result = trainer.fit()
    print(f"final metrics: {result.metrics}", flush=True)


if __name__ == "__main__":
    main()
