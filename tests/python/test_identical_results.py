"""The guard never changes a result: a clean training run gives bit-identical losses with the
guard off, in the default mode, in sync mode and in async mode."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import assertscope


def lm_losses(steps=4):
    torch.manual_seed(0)
    vocab, length = 50, 12
    embed, positions = nn.Embedding(vocab, 16, padding_idx=0), nn.Embedding(length, 16)
    layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1, batch_first=True)
    head = nn.Linear(16, vocab)
    params = [*embed.parameters(), *positions.parameters(), *layer.parameters(), *head.parameters()]
    optimizer = torch.optim.Adam(params, lr=1e-2)
    losses = []
    for _ in range(steps):
        ids = torch.randint(1, vocab, (4, length))
        labels = ids.roll(-1, 1)
        labels[:, -3:] = -100
        h = layer(embed(ids) + positions(torch.arange(length)))
        logits = head(h)
        loss = F.cross_entropy(logits.view(-1, vocab), labels.view(-1), label_smoothing=0.1)
        loss = loss + 0.01 * logits.gather(2, ids.unsqueeze(2)).mean() + 0.0 * h[:, torch.tensor([0, -1])].sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        next_tokens = torch.multinomial(logits[:, -1].softmax(-1), 1)
        losses.append((loss.item(), next_tokens.tolist()))
    return losses


def cnn_losses(steps=4):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2, return_indices=False),
                          nn.Flatten(), nn.Linear(8 * 16, 5))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(steps):
        x, y = torch.randn(6, 3, 8, 8), torch.randint(0, 5, (6,))
        out = model(F.dropout(x, 0.1))
        loss = F.cross_entropy(out, y) + F.binary_cross_entropy(out.sigmoid(), F.one_hot(y, 5).float())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("run", [lm_losses, cnn_losses], ids=["transformer LM", "CNN with BatchNorm"])
def test_losses_are_bit_identical(run):
    plain = run()
    with assertscope.guard():
        default = run()
    with assertscope.guard(mode="sync"):
        sync = run()
    with assertscope.guard(mode="async"):
        asynchronous = run()
    assert plain == default == sync == asynchronous
