"""A fraud detector trained with BCELoss on the model's raw scores.

The bug: the model ends in a Linear layer, not a sigmoid, so BCELoss receives logits
outside [0, 1]. The fix is BCEWithLogitsLoss.
"""

import torch
import torch.nn as nn


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator().manual_seed(1)
    x = torch.randn(512, 16, generator=g)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0.8).float()
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
    criterion = nn.BCELoss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(20):
        scores = model(x.to(device)).squeeze(1)
        loss = criterion(scores, y.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    torch.manual_seed(0)  # the same numbers on every run
    main()
