"""Training scripts that feed one bad label through every kind of map-style DataLoader set-up
people write: the dataset index of the bad sample (in the outermost dataset's index space)
and the chain of datasets down to the user's class are known from the script itself.

Each case is a script (run as a real file under the guard) and what the guard must record:
`indices`, the bad samples' indices as `dataset[i]` takes them, and `chain`, the class and
the index at each level of the dataset chain."""

import textwrap


class Case:
    def __init__(self, name, source, indices, chain, needs=()):
        self.name = name
        self.source = textwrap.dedent(source)
        self.indices = indices
        self.chain = chain  # [(class name, index at that level)], outermost first
        self.needs = needs  # modules the case imports beyond torch

    def __repr__(self):
        return self.name


# The dataset most scripts define: tensors built in __init__, indexed in __getitem__. Label
# 3 (of 3 classes) sits at BAD only.
READINGS = """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

BAD = {bad}


class Readings(Dataset):
    def __init__(self, n={n}):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 4, generator=g)
        labels = [i % 3 for i in range(n)]
        labels[BAD] = 3
        self.y = torch.tensor(labels)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        features = self.x[i]
        label = self.y[i]
        return features, label


torch.manual_seed(0)
head = nn.Linear(4, 3)
device = "cpu"
"""

TRAIN = """
for xb, yb in loader:
    xb, yb = xb.to(device), yb.to(device)
    loss = nn.functional.cross_entropy(head(xb), yb)
"""


def _split_position(index, n, first, seed):
    """Where `random_split(..., [first, n - first], generator=manual_seed(seed))` puts
    `index` in its first part (random_split takes the parts from one randperm)."""
    import torch

    order = torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()
    assert index in order[:first]
    return order[:first].index(index)


def readings(setup, bad=37, n=120, train=TRAIN):
    return READINGS.format(bad=bad, n=n) + textwrap.dedent(setup) + train


CASES = [
    Case(
        "tensor-dataset",
        """
        import torch
        import torch.nn as nn
        from torch.utils.data import DataLoader, TensorDataset

        x = torch.randn(200, 4)
        y = torch.arange(200) % 3
        y[141] = 3
        head = nn.Linear(4, 3)
        for xb, yb in DataLoader(TensorDataset(x, y), batch_size=16):
            xb, yb = xb.to("cpu"), yb.to("cpu")
            loss = nn.functional.cross_entropy(head(xb), yb)
        """,
        [141],
        [("TensorDataset", 141)],
    ),
    Case("init-tensors", readings("loader = DataLoader(Readings(), batch_size=16)\n"), [37], [("Readings", 37)]),
    Case(
        "subset",
        readings("loader = DataLoader(torch.utils.data.Subset(Readings(), list(range(20, 120))), batch_size=16)\n"),
        [17],
        [("Subset", 17), ("Readings", 37)],
    ),
    Case(
        "random-split",
        readings(
            """
            train, val = torch.utils.data.random_split(Readings(), [90, 30], generator=torch.Generator().manual_seed(1))
            loader = DataLoader(train, batch_size=16)
            """
        ),
        [_split_position(37, 120, 90, seed=1)],
        [("Subset", _split_position(37, 120, 90, seed=1)), ("Readings", 37)],
    ),
    Case(
        "concat",
        readings(
            """
            clean = torch.utils.data.TensorDataset(torch.randn(50, 4), torch.zeros(50, dtype=torch.long))
            loader = DataLoader(torch.utils.data.ConcatDataset([clean, Readings()]), batch_size=16)
            """
        ),
        [87],
        [("ConcatDataset", 87), ("Readings", 37)],
    ),
    Case("shuffle", readings("loader = DataLoader(Readings(), batch_size=16, shuffle=True)\n"), [37], [("Readings", 37)]),
    Case(
        "batch-sampler",
        readings(
            """
            class Buckets(torch.utils.data.Sampler):
                def __init__(self, n, size):
                    self.n, self.size = n, size

                def __iter__(self):
                    order = list(range(self.n))[::-1]
                    for k in range(0, self.n, self.size):
                        yield order[k : k + self.size]

                def __len__(self):
                    return (self.n + self.size - 1) // self.size

            loader = DataLoader(Readings(), batch_sampler=Buckets(120, 16))
            """
        ),
        [37],
        [("Readings", 37)],
    ),
    Case(
        "sampler",
        readings(
            """
            weights = torch.ones(120)
            sampler = torch.utils.data.WeightedRandomSampler(weights, 120, replacement=False, generator=torch.Generator().manual_seed(2))
            loader = DataLoader(Readings(), batch_size=16, sampler=sampler)
            """
        ),
        [37],
        [("Readings", 37)],
    ),
    Case(
        "distributed-sampler",
        readings(
            """
            import os, tempfile
            import torch.distributed as dist

            store = os.path.join(tempfile.mkdtemp(), "store")
            dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
            sampler = torch.utils.data.distributed.DistributedSampler(Readings(), shuffle=True, seed=3)
            sampler.set_epoch(0)
            loader = DataLoader(Readings(), batch_size=16, sampler=sampler)
            try:
                for xb, yb in loader:
                    xb, yb = xb.to(device), yb.to(device)
                    loss = nn.functional.cross_entropy(head(xb), yb)
            finally:
                dist.destroy_process_group()
            """,
            train="",
        ),
        [37],
        [("Readings", 37)],
    ),
    Case(
        "workers",
        readings("loader = DataLoader(Readings(), batch_size=16, shuffle=True, num_workers=2)\n"),
        [37],
        [("Readings", 37)],
    ),
    Case(
        "dict-batch",
        """
        import torch
        import torch.nn as nn
        from torch.utils.data import DataLoader, Dataset

        class Tokens(Dataset):
            def __init__(self):
                g = torch.Generator().manual_seed(0)
                self.ids = torch.randint(0, 20, (64, 6), generator=g)
                self.labels = torch.randint(0, 3, (64,), generator=g)
                self.labels[45] = 7

            def __len__(self):
                return len(self.labels)

            def __getitem__(self, i):
                return {"input_ids": self.ids[i], "labels": self.labels[i]}

        embed, head = nn.Embedding(20, 8), nn.Linear(8, 3)
        for batch in DataLoader(Tokens(), batch_size=8, shuffle=True):
            batch = {k: v.to("cpu") for k, v in batch.items()}
            logits = head(embed(batch["input_ids"]).mean(1))
            loss = nn.functional.cross_entropy(logits, batch["labels"])
        """,
        [45],
        [("Tokens", 45)],
    ),
    Case(
        "collate-fn",
        readings(
            """
            def collate(samples):
                xs = torch.stack([x for x, _ in samples])
                ys = torch.stack([y for _, y in samples])
                return {"x": xs, "y": ys}

            for batch in DataLoader(Readings(), batch_size=16, shuffle=True, collate_fn=collate):
                loss = nn.functional.cross_entropy(head(batch["x"]), batch["y"])
            """,
            train="",
        ),
        [37],
        [("Readings", 37)],
    ),
    Case(
        "drop-last",
        readings("loader = DataLoader(Readings(), batch_size=16, shuffle=True, drop_last=True, generator=torch.Generator().manual_seed(5))\n"),
        [37],
        [("Readings", 37)],
    ),
    Case(
        "reused-iterator",
        readings(
            """
            loader = DataLoader(Readings(), batch_size=16, shuffle=True, num_workers=2, persistent_workers=True)
            for epoch in range(2):
                for xb, yb in loader:
                    if epoch == 1:
                        loss = nn.functional.cross_entropy(head(xb), yb)
            """,
            train="",
        ),
        [37],
        [("Readings", 37)],
    ),
    Case(
        "lightning-datamodule",
        readings(
            """
            import lightning as L

            class Data(L.LightningDataModule):
                def setup(self, stage):
                    self.train = torch.utils.data.Subset(Readings(), list(range(10, 120)))

                def train_dataloader(self):
                    return DataLoader(self.train, batch_size=16, shuffle=True)

            class Model(L.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.head = nn.Linear(4, 3)

                def training_step(self, batch, batch_idx):
                    x, y = batch
                    return nn.functional.cross_entropy(self.head(x), y)

                def configure_optimizers(self):
                    return torch.optim.SGD(self.parameters(), lr=0.1)

            trainer = L.Trainer(accelerator="cpu", devices=1, max_epochs=1, logger=False, enable_checkpointing=False,
                                enable_progress_bar=False, enable_model_summary=False)
            trainer.fit(Model(), datamodule=Data())
            """,
            train="",
        ),
        [27],
        [("Subset", 27), ("Readings", 37)],
        needs=("lightning",),
    ),
    Case(
        "hf-trainer",
        """
        import tempfile
        import torch
        from torch.utils.data import Dataset
        from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

        class Reviews(Dataset):
            def __init__(self):
                g = torch.Generator().manual_seed(0)
                self.ids = torch.randint(1, 50, (40, 8), generator=g)
                self.labels = torch.randint(0, 3, (40,), generator=g)
                self.labels[22] = 3

            def __len__(self):
                return len(self.labels)

            def __getitem__(self, i):
                return {"input_ids": self.ids[i], "labels": self.labels[i]}

        torch.manual_seed(0)
        config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                            intermediate_size=32, max_position_embeddings=16, num_labels=3)
        args = TrainingArguments(output_dir=tempfile.mkdtemp(), per_device_train_batch_size=4, num_train_epochs=1,
                                 use_cpu=True, report_to=[], save_strategy="no", logging_strategy="no", seed=0,
                                 disable_tqdm=True)
        Trainer(model=BertForSequenceClassification(config), args=args, train_dataset=Reviews()).train()
        """,
        [22],
        [("Reviews", 22)],
        needs=("transformers",),
    ),
    Case(
        "hf-datasets",
        """
        import datasets
        import torch
        import torch.nn as nn
        from torch.utils.data import DataLoader

        labels = [i % 3 for i in range(60)]
        labels[52] = 3
        table = datasets.Dataset.from_dict({"x": [[float(i)] * 4 for i in range(60)], "label": labels})
        table = table.with_format("torch")
        head = nn.Linear(4, 3)
        for batch in DataLoader(table, batch_size=8, shuffle=True):
            loss = nn.functional.cross_entropy(head(batch["x"]), batch["label"])
        """,
        [52],
        [("Dataset", 52)],
        needs=("datasets",),
    ),
]

