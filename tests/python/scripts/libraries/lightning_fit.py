"""A Lightning Trainer.fit run of a tiny text classifier.

    python lightning_fit.py OUT_DIR [clean|bad-label|bad-token]

The dataset, with its planted bad values, is reviews.py's. A clean run prints the final
weights' checksum."""

import sys

import lightning as L
import torch
from reviews import NUM_CLASSES, VOCAB_SIZE, Reviews
from torch.utils.data import DataLoader

out_dir, mode = sys.argv[1], sys.argv[2]


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(VOCAB_SIZE, 16)
        self.head = torch.nn.Linear(16, NUM_CLASSES)

    def training_step(self, batch, batch_idx):
        logits = self.head(self.tok(batch["input_ids"]).mean(1))
        return torch.nn.functional.cross_entropy(logits, batch["labels"])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


L.seed_everything(0, verbose=False)
model = Classifier()
trainer = L.Trainer(default_root_dir=out_dir, accelerator="cpu", devices=1, max_epochs=1, logger=False,
                    enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
trainer.fit(model, DataLoader(Reviews(mode), batch_size=4))
print("checksum", float(sum(p.detach().double().sum() for p in model.parameters())))
