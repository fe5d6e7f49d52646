"""Run with `python -m pkg`: a gather with -100 padding in the index."""

import torch

scores = torch.randn(3, 5)
labels = torch.tensor([1, -100, 4])
print(scores.gather(1, labels.unsqueeze(1)))
