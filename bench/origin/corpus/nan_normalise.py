"""Sampling from normalised scores; a row of all-zero scores normalises to NaN."""
import torch


def normalise(scores):
    return scores / scores.sum(dim=-1, keepdim=True)


scores = torch.rand(4, 6)
scores[2] = 0.0
probs = normalise(scores)
picked = torch.multinomial(probs, 1)
print(picked)
