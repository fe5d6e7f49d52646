"""A classifier whose labels are 1-based: labels 1..4 for a 4-class head."""

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(8, 4)
criterion = nn.CrossEntropyLoss()
x = torch.randn(16, 8)
y = torch.randint(1, 5, (16,))
y[3] = 4
for step in range(3):
    loss = criterion(model(x), y)
    loss.backward()
    print("step", step, loss.item())
