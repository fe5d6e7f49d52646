import torch  # noqa: F401

print("unreachable without torch")
