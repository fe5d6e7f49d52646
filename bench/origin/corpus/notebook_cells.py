# %% [markdown]
# Exploratory notebook exported as cells; a later cell shifts the labels again.

# %%
import torch
import torch.nn as nn

# %%
labels = torch.randint(0, 4, (48,))
features = torch.randn(48, 5)

# %%
labels = labels + 1  # "make labels human-readable" cell, re-run by mistake
clf = nn.Linear(5, 4)

# %%
out = clf(features)
loss = nn.functional.cross_entropy(out, labels)
