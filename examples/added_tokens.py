"""A small language model whose tokenizer gained special tokens after the model was built.

The bug: the embedding table is sized from the vocabulary before `add_tokens`, so the new
ids are past its last row (`index out of range in self` on the CPU, `srcIndex <
srcSelectDimSize` on a GPU).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Tokenizer:
    def __init__(self, words):
        self.vocab = {w: i for i, w in enumerate(words)}

    def add_tokens(self, tokens):
        for t in tokens:
            self.vocab.setdefault(t, len(self.vocab))

    def __len__(self):
        return len(self.vocab)

    def encode(self, text):
        return [self.vocab[w] for w in text.split()]


class TinyLM(nn.Module):
    def __init__(self, vocab_size, dim=32):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, dim)
        self.head = nn.Linear(dim, vocab_size)

    def forward(self, ids):
        return self.head(self.tok(ids))


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    tok = Tokenizer("the cat sat on a mat dog ran to park".split())
    model = TinyLM(len(tok)).to(device)
    tok.add_tokens(["<bos>", "<eos>"])
    texts = ["the cat sat on a mat", "<bos> the dog ran to a park <eos>"]
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step, text in enumerate(texts * 3):
        ids = torch.tensor([tok.encode(text)], device=device)
        logits = model(ids[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.3f}")


if __name__ == "__main__":
    torch.manual_seed(0)  # the same numbers on every run
    main()
