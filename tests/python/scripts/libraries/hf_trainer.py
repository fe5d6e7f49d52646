"""A Hugging Face Trainer run on a tiny BERT built from its config (no download).

    python hf_trainer.py OUT_DIR [clean|bad-label|bad-token]

The dataset, with its planted bad values, is reviews.py's. A clean run prints the final
weights' checksum."""

import sys

import torch
from reviews import NUM_CLASSES, SEQUENCE_LENGTH, VOCAB_SIZE, Reviews
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

out_dir, mode = sys.argv[1], sys.argv[2]

torch.manual_seed(0)
config = BertConfig(vocab_size=VOCAB_SIZE, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=32, max_position_embeddings=2 * SEQUENCE_LENGTH, num_labels=NUM_CLASSES)
model = BertForSequenceClassification(config)
args = TrainingArguments(output_dir=out_dir, per_device_train_batch_size=4, num_train_epochs=1, use_cpu=True,
                         report_to=[], save_strategy="no", logging_strategy="no", seed=0, disable_tqdm=True,
                         dataloader_num_workers=0)
trainer = Trainer(model=model, args=args, train_dataset=Reviews(mode))
trainer.train()
print("checksum", float(sum(p.detach().double().sum() for p in model.parameters())))
