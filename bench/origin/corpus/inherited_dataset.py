"""A base dataset delegates labels to its subclass, which reads them from a column table."""
import torch
from torch.utils.data import DataLoader, Dataset

FRAME = {"size": [1.0, 2.0, 3.0, 4.0] * 5, "grade": ["A", "B", "C", "D"] * 5}
GRADES = {"A": 0, "B": 1, "C": 2}


class Base(Dataset):
    def __len__(self):
        return len(self.frame["size"])

    def __getitem__(self, i):
        return torch.tensor([self.frame["size"][i]]), self.label(i)


class Grades(Base):
    def __init__(self, frame):
        self.frame = frame

    def label(self, i):
        return GRADES.get(self.frame["grade"][i], len(GRADES))


for x, y in DataLoader(Grades(FRAME), batch_size=5):
    torch.nn.functional.cross_entropy(torch.nn.Linear(1, 3)(x), y).backward()
