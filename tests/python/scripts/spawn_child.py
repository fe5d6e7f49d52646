"""A multiprocessing 'spawn' child that indexes past an embedding table."""

import multiprocessing as mp


def work(_):
    import torch
    import torch.nn.functional as F

    return F.embedding(torch.tensor([0, 12]), torch.randn(12, 2)).sum().item()


if __name__ == "__main__":
    with mp.get_context("spawn").Pool(1) as pool:
        print(pool.map(work, [0]))
