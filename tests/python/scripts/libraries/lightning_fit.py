"""A Lightning Trainer.fit run of a tiny text classifier.

    python lightning_fit.py OUT_DIR [clean|bad-label|bad-token]

bad-label plants class 3 (of 3) at dataset index 13, bad-token the id 50 (vocabulary 50)
at index 7. A clean run prints the final weights' checksum."""

import sys

import lightning as L
import torch
from torch.utils.data import DataLoader, Dataset

out_dir, mode = sys.argv[1], sys.argv[2]


class Reviews(Dataset):
    def __init__(self, n=32):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(1, 50, (n, 8), generator=g)
        self.labels = torch.randint(0, 3, (n,), generator=g)
        if mode == "bad-label":
            self.labels[13] = 3
        if mode == "bad-token":
            self.ids[7, 5] = 50

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.ids[i], self.labels[i]


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(50, 16)
        self.head = torch.nn.Linear(16, 3)

    def training_step(self, batch, batch_idx):
        ids, labels = batch
        logits = self.head(self.tok(ids).mean(1))
        return torch.nn.functional.cross_entropy(logits, labels)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


L.seed_everything(0, verbose=False)
model = Classifier()
trainer = L.Trainer(default_root_dir=out_dir, accelerator="cpu", devices=1, max_epochs=1, logger=False,
                    enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
trainer.fit(model, DataLoader(Reviews(), batch_size=4))
print("checksum", float(sum(p.detach().double().sum() for p in model.parameters())))
