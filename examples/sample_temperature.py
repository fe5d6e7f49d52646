"""Sampling text from a model with a temperature option.

The bug: `--temperature 0` (meant as greedy decoding) divides the logits by zero; the
softmax is then NaN and torch.multinomial rejects it (a device-side assert on a GPU).
"""

import argparse

import torch


def sample(logits, temperature):
    probs = torch.softmax(logits / temperature, dim=-1)
    return torch.multinomial(probs, num_samples=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--temperature", type=float, default=0.0)
    args = ap.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    logits = torch.randn(2, 50, device=device)
    for step in range(3):
        token = sample(logits, args.temperature)
        print(f"step {step} tokens {token.flatten().tolist()}")


if __name__ == "__main__":
    main()
