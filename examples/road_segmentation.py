"""Semantic segmentation of road scenes into 3 classes.

The bug: the masks mark unlabelled pixels with 255, the usual 'void' value, but the loss
is not told to ignore it: `nn.CrossEntropyLoss(ignore_index=255)` fixes it.
"""

import torch
import torch.nn as nn

NUM_CLASSES = 3


def batch(n=4, size=32, seed=0):
    g = torch.Generator().manual_seed(seed)
    images = torch.randn(n, 3, size, size, generator=g)
    masks = torch.randint(0, NUM_CLASSES, (n, size, size), generator=g)
    masks[:, :2, :] = 255                               # void border from the annotation tool
    return images, masks


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.Conv2d(16, NUM_CLASSES, 1))
    model = model.to(device)
    criterion = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(5):
        images, masks = batch(seed=step)
        logits = model(images.to(device))
        loss = criterion(logits, masks.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    torch.manual_seed(0)  # the same numbers on every run
    main()
