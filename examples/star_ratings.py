"""Product reviews rated 1 to 5 stars, classified into 5 classes.

The bug: star ratings are 1-based, so the label 5 is past the last class of a 5-way
head. On a GPU this is `Assertion t >= 0 && t < n_classes failed` and an unrelated
traceback; under `assertscope run` it is caught at the loss, with the values.
"""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

NUM_CLASSES = 5


def load_reviews(n=2000, dim=32, seed=0):
    g = torch.Generator().manual_seed(seed)
    stars = torch.randint(1, 6, (n,), generator=g)          # 1..5, as in the raw data
    features = torch.randn(n, dim, generator=g) + stars[:, None] * 0.3
    return TensorDataset(features, stars)


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    loader = DataLoader(load_reviews(), batch_size=64, shuffle=True)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, NUM_CLASSES)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(3):
        total = 0.0
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = criterion(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        print(f"epoch {epoch} loss {total / len(loader):.4f}")


if __name__ == "__main__":
    torch.manual_seed(0)  # the same numbers on every run
    main()
