"""Trains the bag model; the vocabulary is sized before the held-out records are encoded."""
import json

from torch.utils.data import DataLoader

from .data import Records
from .model import Bag
from .vocab import Vocab

TRAIN = [json.dumps({"text": "good film"}), json.dumps({"text": "bad film"})] * 8
HELD_OUT = [json.dumps({"text": "strange unseen words"})]


def main():
    vocab = Vocab(" ".join(json.loads(l)["text"] for l in TRAIN).split())
    model = Bag(len(vocab))
    loader = DataLoader(Records(TRAIN + HELD_OUT, vocab), batch_size=17)
    for ids in loader:
        model(ids)


if __name__ == "__main__":
    main()
