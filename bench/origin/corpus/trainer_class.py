"""Class-heavy: a Trainer builds everything in setup(); the dataset shifts targets in a method."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Shapes(Dataset):
    offset = 2

    def __init__(self, n):
        self.n = n
        self.raw = torch.arange(n) % 5

    def __len__(self):
        return self.n

    def target(self, i):
        return int(self.raw[i]) + self.offset

    def __getitem__(self, i):
        return torch.randn(8), self.target(i)


class Trainer:
    def __init__(self, classes=5):
        self.classes = classes

    def setup(self):
        self.model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, self.classes))
        self.criterion = nn.CrossEntropyLoss()
        self.loader = DataLoader(Shapes(40), batch_size=8)

    def train_epoch(self):
        for batch_idx, (inputs, targets) in enumerate(self.loader):
            outputs = self.model(inputs)
            loss = self.criterion(outputs, targets)
            loss.backward()


trainer = Trainer()
trainer.setup()
trainer.train_epoch()
