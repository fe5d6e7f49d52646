"""A Hugging Face Trainer run on a tiny BERT built from its config (no download).

    python hf_trainer.py OUT_DIR [clean|bad-label|bad-token]

bad-label plants class 3 (of 3) at dataset index 13, bad-token the id 50 (vocabulary 50)
at index 7. A clean run prints the final weights' checksum."""

import sys

import torch
from torch.utils.data import Dataset
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

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
        return {"input_ids": self.ids[i], "attention_mask": torch.ones(8, dtype=torch.long), "labels": self.labels[i]}


torch.manual_seed(0)
config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=32, max_position_embeddings=16, num_labels=3)
model = BertForSequenceClassification(config)
args = TrainingArguments(output_dir=out_dir, per_device_train_batch_size=4, num_train_epochs=1, use_cpu=True,
                         report_to=[], save_strategy="no", logging_strategy="no", seed=0, disable_tqdm=True,
                         dataloader_num_workers=0)
trainer = Trainer(model=model, args=args, train_dataset=Reviews())
trainer.train()
print("checksum", float(sum(p.detach().double().sum() for p in model.parameters())))
