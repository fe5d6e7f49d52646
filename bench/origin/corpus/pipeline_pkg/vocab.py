"""A vocabulary that grows while it encodes."""


class Vocab:
    def __init__(self, words):
        self.stoi = {w: i for i, w in enumerate(sorted(set(words)))}

    def __len__(self):
        return len(self.stoi)

    def encode(self, text):
        return [self.stoi.setdefault(w, len(self.stoi)) for w in text.split()]
