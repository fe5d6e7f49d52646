"""A dataclass config sizes the head; the data has one class more."""
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class Config:
    hidden: int = 16
    num_classes: int = 9


def build(cfg: Config):
    return nn.Sequential(nn.Linear(12, cfg.hidden), nn.Tanh(), nn.Linear(cfg.hidden, cfg.num_classes))


cfg = Config()
model = build(cfg)
x = torch.randn(30, 12)
y = torch.randint(0, 10, (30,))
nn.functional.cross_entropy(model(x), y).backward()
