"""The dataset the library scripts train on: 32 reviews of 8 token ids (vocabulary 50) and a
class label (3 classes), with one bad value planted for the bad-data runs.

bad-label plants class 3 at dataset index 13 (BAD_LABEL_INDEX), bad-token the id 50 at index
7 (BAD_TOKEN_INDEX). Each sample is a dict, as Hugging Face's Trainer wants; PyTorch's default
collate batches it the same way for the other libraries."""

import torch
from torch.utils.data import Dataset

VOCAB_SIZE = 50
NUM_CLASSES = 3
SEQUENCE_LENGTH = 8
BAD_LABEL_INDEX = 13
BAD_TOKEN_INDEX = 7


class Reviews(Dataset):
    def __init__(self, mode, n=32):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(1, VOCAB_SIZE, (n, SEQUENCE_LENGTH), generator=g)
        self.labels = torch.randint(0, NUM_CLASSES, (n,), generator=g)
        if mode == "bad-label":
            self.labels[BAD_LABEL_INDEX] = NUM_CLASSES
        if mode == "bad-token":
            self.ids[BAD_TOKEN_INDEX, 5] = VOCAB_SIZE

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        label = self.labels[i]
        return {"input_ids": self.ids[i], "attention_mask": torch.ones(SEQUENCE_LENGTH, dtype=torch.long), "labels": label}
