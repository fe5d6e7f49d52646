"""A DataLoader whose worker one-hot encodes a label past num_classes."""

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Labels(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return F.one_hot(torch.tensor(i), num_classes=5)


if __name__ == "__main__":
    for batch in DataLoader(Labels(), batch_size=4, num_workers=2):
        print(batch.shape)
