"""A token tagger trained under torch.compile, on the GPU when there is one.

    python compiled_tagger.py [clean | bad-id | bad-label]

`bad-id` feeds a token id past the embedding table at step 2, `bad-label` a class label past
the last class; both only inside the compiled model. Without a guard the GPU run ends in a
device-side assert from Inductor's generated kernel.
"""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, CLASSES = 50, 5


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 32)
        self.mix = nn.Linear(32, 32)
        self.head = nn.Linear(32, CLASSES)

    def forward(self, ids, labels):
        hidden = torch.relu(self.mix(self.embed(ids)))
        logits = self.head(hidden)
        return F.cross_entropy(logits.flatten(0, 1), labels.flatten())


case = sys.argv[1] if len(sys.argv) > 1 else "clean"
device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = Tagger().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
step_fn = torch.compile(model)
for step in range(4):
    ids = torch.randint(0, VOCAB, (8, 16), device=device)
    labels = torch.randint(0, CLASSES, (8, 16), device=device)
    if step == 2 and case == "bad-id":
        ids[3, 7] = VOCAB + 4
    if step == 2 and case == "bad-label":
        labels[5, 1] = CLASSES
    loss = step_fn(ids, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.4f}")
print("done", case)
