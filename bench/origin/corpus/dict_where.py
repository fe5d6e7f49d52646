"""Token tagging with dict batches; invalid positions are marked with np.where(..., -1)."""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Tagged(Dataset):
    def __init__(self, n=32, length=6):
        rng = np.random.default_rng(3)
        self.tags = rng.integers(0, 3, size=(n, length))
        self.valid = rng.random((n, length)) > 0.2

    def __len__(self):
        return len(self.tags)

    def __getitem__(self, i):
        labels = np.where(self.valid[i], self.tags[i], -1)
        return {"x": torch.randn(6, 4), "labels": torch.as_tensor(labels)}


head = nn.Linear(4, 3)
for batch in DataLoader(Tagged(), batch_size=8):
    scores = head(batch["x"])
    loss = nn.functional.cross_entropy(scores.flatten(0, 1), batch["labels"].flatten())
    loss.backward()
