"""Records from a JSON-lines export, encoded with the vocabulary."""
import json

import torch
from torch.utils.data import Dataset


class Records(Dataset):
    def __init__(self, lines, vocab):
        self.items = [json.loads(line) for line in lines]
        self.vocab = vocab

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        ids = self.vocab.encode(self.items[i]["text"])
        return torch.tensor(ids[:4] + [0] * (4 - len(ids[:4])))
