"""The origin facts of a guard failure, as the failing process records them for the origin
engine: the module whose size the data broke with its construction stack, the dataset
indices of the offending samples and the user's line where a re-read sample first held the
bad value, the locals holding the failing tensor. Each test runs a real script file under
the guard and reads the GuardError it raised (its `runtime` block is what the guard report
carries). The path drawn from these facts is the engine's (test_origin_engine_call.py)."""

import runpy
import sys
import textwrap

import pytest
import torch

import assertscope
from assertscope import GuardError


def run_script(tmp_path, source, name="train.py"):
    """Runs `source` as a script under the synchronous guard; returns its GuardError."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    with pytest.raises(GuardError) as caught:
        with assertscope.guard(mode="sync"):
            runpy.run_path(str(path), run_name="__main__")
    return caught.value, path.read_text().splitlines()


def line_of(lines, text):
    matches = [n for n, line in enumerate(lines, 1) if text in line]
    assert len(matches) == 1, (text, matches)
    return matches[0]


def module_sites(error, k=0):
    """(lines in the script, the module's description) of the k-th module the facts name
    (the stack goes on into this test file, which ran the script)."""
    module = error.runtime["modules"][k]
    return [site["line"] for site in module["sites"] if site["file"].endswith("/train.py")], module["description"]


def test_a_head_sized_too_small_is_named_where_it_was_built_and_where_its_size_was_set(tmp_path):
    error, lines = run_script(
        tmp_path,
        """
        import torch
        import torch.nn as nn

        labels = torch.tensor([0, 3, 1, 4, 2, 4])
        num_classes = int(labels.max())
        head = nn.Linear(8, num_classes)
        loss = nn.functional.cross_entropy(head(torch.randn(6, 8)), labels)
        """,
    )
    assert error.cause == "target-out-of-range"
    assert error.location["line"] == line_of(lines, "loss = ")
    sites, description = module_sites(error)
    assert sites == [line_of(lines, "head = nn.Linear")]
    assert description == "nn.Linear(in_features=8, out_features=4)"
    head = error.runtime["modules"][0]
    assert (head["size_argument"], head["size"], head["need"]) == ("out_features", 4, 5)
    assert error.runtime["frames"][0]["holders"] == ["labels"]


def test_a_model_moved_to_a_device_is_sized_by_its_constructor_not_the_device(tmp_path):
    error, lines = run_script(
        tmp_path,
        """
        import torch
        import torch.nn as nn

        VOCAB = 10
        device = "cpu"


        class Tagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(VOCAB, 4)

            def forward(self, ids):
                return self.embed(ids)


        model = Tagger().to(device)
        model(torch.tensor([3, 12]))
        """,
    )
    assert error.cause == "embedding-index-out-of-range"
    # The table's construction stack: its line in __init__, then where the model was built
    # (the engine follows VOCAB from there); the device's line is no part of it.
    sites, description = module_sites(error)
    assert sites == [line_of(lines, "self.embed = nn.Embedding"), line_of(lines, "model = Tagger().to(device)")]
    assert description == "nn.Embedding(num_embeddings=10, embedding_dim=4)"
    assert error.runtime["modules"][0]["need"] == 13


def test_dataloader_samples_are_named_by_dataset_index_through_shuffling_and_workers(tmp_path):
    error, lines = run_script(
        tmp_path,
        """
        import torch
        import torch.nn as nn
        from torch.utils.data import DataLoader, Dataset

        class Rows(Dataset):
            def __len__(self):
                return 300

            def __getitem__(self, i):
                x = torch.full((4,), float(i))
                label = 9 if i in (117, 245) else i % 3
                return x, label

        torch.manual_seed(0)
        model = nn.Linear(4, 3)
        for x, y in DataLoader(Rows(), batch_size=50, shuffle=True, num_workers=2):
            loss = nn.functional.cross_entropy(model(x), y)
        """,
    )
    indices = error.values["dataset_indices"]
    assert indices and set(indices) <= {117, 245}
    assert error.runtime["dataset"]["indices"] == indices
    observed = error.runtime["observed"][0]
    assert (observed["line"], observed["function"], observed["name"], observed["value"]) == (
        line_of(lines, "label = 9 if"), "__getitem__", "label", 9,
    )


def test_a_value_made_by_a_custom_collate_fn_is_traced_into_the_collate_fn(tmp_path):
    error, lines = run_script(
        tmp_path,
        """
        import torch
        from torch.utils.data import DataLoader

        def collate(samples):
            xs = torch.stack([x for x, _ in samples])
            ys = torch.tensor([y for _, y in samples]) + 1
            return xs, ys

        data = [(torch.randn(5), i % 5) for i in range(40)]
        head = torch.nn.Linear(5, 5)
        for x, y in DataLoader(data, batch_size=8, collate_fn=collate):
            torch.nn.functional.cross_entropy(head(x), y)
        """,
    )
    assert set(error.values["dataset_indices"]) <= {i for i in range(40) if i % 5 == 4}
    assert error.runtime["observed"][0]["line"] == line_of(lines, "ys = torch.tensor")
    assert error.runtime["dataset"]["collate"]["line"] == line_of(lines, "def collate")


def test_a_label_made_in_a_return_expression_is_observed_on_the_return_line(tmp_path):
    error, lines = run_script(
        tmp_path,
        """
        import torch
        from torch.utils.data import DataLoader, Dataset

        NAMES = ["a", "b", "c"]

        class Items(Dataset):
            def __init__(self):
                self.ids = {name: k for k, name in enumerate(NAMES, start=1)}

            def __len__(self):
                return 30

            def __getitem__(self, i):
                return torch.randn(2), self.ids[NAMES[i % 3]]

        head = torch.nn.Linear(2, 3)
        for x, y in DataLoader(Items(), batch_size=10):
            torch.nn.functional.cross_entropy(head(x), y)
        """,
    )
    observed = error.runtime["observed"]
    assert [(o["line"], o["name"], o["value"]) for o in observed] == [
        (line_of(lines, "return torch.randn(2), self.ids"), "<return>", 3)
    ]
    assert error.runtime["dataset"]["chain"][0]["init_line"] == line_of(lines, "def __init__")
    assert "1-based" in str(error)


def test_late_bad_values_give_the_first_failing_step_and_index(tmp_path):
    error, _ = run_script(
        tmp_path,
        """
        import torch
        from torch.utils.data import DataLoader, TensorDataset

        y = torch.arange(1000) % 4
        y[913] = 4
        head = torch.nn.Linear(3, 4)
        for xb, yb in DataLoader(TensorDataset(torch.randn(1000, 3), y), batch_size=100):
            torch.nn.functional.cross_entropy(head(xb), yb)
        """,
    )
    assert error.values["dataset_indices"] == [913]
    assert error.values["batch_step"] == 10
    assert "step 10 of 10 (dataset index 913) after 9 clean batches" in error.diagnosis["fix"]


def test_the_local_holding_a_computed_index_is_named(tmp_path):
    error, lines = run_script(
        tmp_path,
        """
        import torch

        scores = torch.randn(4, 30)
        short = scores[:, :10]
        best = scores.topk(3, dim=1).indices
        best = best.to("cpu")
        picked = torch.gather(short, 1, best)
        """,
    )
    assert error.location["line"] == line_of(lines, "picked =")
    assert error.runtime["frames"][0]["holders"] == ["best"]
    assert error.runtime["operand"]["parameter"] == "index"


def test_an_embedding_table_is_named_where_it_was_built(tmp_path):
    error, lines = run_script(
        tmp_path,
        """
        import torch.nn as nn
        import torch

        class Model(nn.Module):
            def __init__(self, vocab):
                super().__init__()
                self.tokens = nn.Embedding(vocab, 8)

            def forward(self, ids):
                return self.tokens(ids)

        vocab = {"a": 0, "b": 1}
        model = Model(len(vocab))
        vocab["<unk>"] = 2
        model(torch.tensor([[0, 2, 1]]))
        """,
    )
    assert error.cause == "embedding-index-out-of-range"
    sites, description = module_sites(error)
    assert sites == [line_of(lines, "self.tokens = nn.Embedding"), line_of(lines, "model = Model(len(vocab))")]
    assert description == "nn.Embedding(num_embeddings=2, embedding_dim=8)"


def test_positions_counted_from_one_are_named_as_such(tmp_path):
    error, lines = run_script(
        tmp_path,
        """
        import torch
        import torch.nn as nn

        table = nn.Embedding(16, 4)
        positions = torch.arange(1, 17)
        table(positions)
        """,
    )
    text = " ".join(str(error).split())  # (the report wraps its lines)
    assert "position ids that start at 1 (1 to 16)" in text
    assert "16 long but the table has 16" not in text
    # The rule's general `why:` lists every kind of index an embedding takes; what this
    # failure's own lines say (spans, findings, fix) must not call the positions token ids.
    own = text[: text.index(" why: ")] + text[text.index(" fix: ") :]
    assert "token id" not in own.lower()
    assert error.runtime["frames"][0]["holders"] == ["positions"]


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_a_recurrent_state_built_for_another_batch_size_is_guarded(tmp_path, kind, batch_first):
    state = "(h0, h0)" if kind == "LSTM" else "h0"
    x_shape = "(3, 7, 5)" if batch_first else "(7, 3, 5)"
    error, lines = run_script(
        tmp_path,
        f"""
        import torch
        import torch.nn as nn

        rnn = nn.{kind}(5, 6, batch_first={batch_first})
        h0 = torch.zeros(1, 8, 6)
        out = rnn(torch.randn{x_shape}, {state})
        """,
    )
    assert error.cause == "batch-size-mismatch"
    assert error.values["hidden_batch"] == 8 and error.values["input_batch"] == 3
    assert error.location["line"] == line_of(lines, "out = rnn(")
    assert error.runtime["frames"][0]["holders"] == ["h0"]
    assert error.runtime["modules"][0]["role"] == "rnn"
    assert module_sites(error)[0] == [line_of(lines, f"rnn = nn.{kind}")]


def test_a_matching_recurrent_state_and_other_rnn_errors_are_left_to_pytorch():
    with assertscope.guard(mode="sync"):
        lstm = torch.nn.LSTM(5, 6)
        out, _ = lstm(torch.randn(7, 3, 5), (torch.zeros(1, 3, 6), torch.zeros(1, 3, 6)))
        assert out.shape == (7, 3, 6)
        with pytest.raises(RuntimeError) as caught:
            lstm(torch.randn(7, 3, 5), (torch.zeros(2, 3, 6), torch.zeros(2, 3, 6)))  # wrong layer count
        assert not isinstance(caught.value, GuardError)


def test_float_class_targets_holding_integers_are_named_with_the_line_that_made_them(tmp_path):
    error, lines = run_script(
        tmp_path,
        """
        import torch

        logits = torch.randn(6, 3)
        labels = torch.tensor([0, 2, 1, 1, 0, 2], dtype=torch.float32)
        torch.nn.functional.cross_entropy(logits, labels)
        """,
    )
    assert error.cause == "target-dtype"
    assert "float32 holding whole numbers (0 to 2)" in str(error)
    assert error.runtime["frames"][0]["holders"] == ["labels"]
    assert error.runtime["operand"] == {"parameter": "target", "index": 1}


def test_probability_targets_of_the_logits_shape_are_still_accepted():
    with assertscope.guard(mode="sync"):
        logits = torch.randn(4, 3)
        soft = torch.softmax(torch.randn(4, 3), dim=1)
        expected = torch.nn.functional.cross_entropy(logits, soft)
    assert torch.equal(expected, torch.nn.functional.cross_entropy(logits, soft))


def test_logits_and_targets_of_different_batch_sizes_name_the_reshape(tmp_path):
    error, lines = run_script(
        tmp_path,
        """
        import torch

        features = torch.randn(10, 4, 6)
        flat = features.view(-1, 12)
        logits = flat @ torch.randn(12, 3)
        torch.nn.functional.cross_entropy(logits, torch.zeros(10, dtype=torch.long))
        """,
    )
    assert error.cause == "batch-size-mismatch"
    assert "batch size 20" in str(error) and "the target 10" in str(error)


def test_the_re_read_leaves_an_existing_tracer_in_place(tmp_path):
    calls = []

    def tracer(frame, event, arg):
        calls.append(event)
        return None

    sys.settrace(tracer)
    try:
        run_script(
            tmp_path,
            """
            import torch
            from torch.utils.data import DataLoader
            data = [(torch.randn(2), 7) for _ in range(4)]
            for x, y in DataLoader(data, batch_size=2):
                torch.nn.functional.cross_entropy(torch.randn(2, 3), y)
            """,
        )
        assert sys.gettrace() is tracer
    finally:
        sys.settrace(None)


def test_clean_loaders_and_modules_behave_exactly_as_without_the_guard():
    from torch.utils.data import DataLoader, TensorDataset

    def epoch():
        torch.manual_seed(3)
        data = TensorDataset(torch.randn(64, 4), torch.arange(64) % 3)
        model = torch.nn.Linear(4, 3)
        losses = [torch.nn.functional.cross_entropy(model(x), y) for x, y in DataLoader(data, batch_size=10, shuffle=True)]
        return torch.stack(losses), model.weight.detach().clone()

    plain = epoch()
    with assertscope.guard(mode="sync"):
        guarded = epoch()
    assert torch.equal(plain[0], guarded[0]) and torch.equal(plain[1], guarded[1])
    from torch.utils.data import dataloader

    assert not hasattr(dataloader._BaseDataLoaderIter.__next__, "__wrapped__")
    assert not hasattr(torch.nn.Linear.__init__, "__wrapped__")
    assert "__init__" not in vars(torch.nn.BatchNorm1d)
    assert not hasattr(DataLoader.__init__, "__wrapped__")


def test_a_last_batch_of_one_through_batchnorm_names_the_dataloader_and_the_layer(tmp_path):
    error, lines = run_script(
        tmp_path,
        """
        import torch
        import torch.nn as nn
        from torch.utils.data import DataLoader, TensorDataset

        net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
        loader = DataLoader(TensorDataset(torch.randn(9, 3)), batch_size=4)
        for (x,) in loader:
            net(x)
        """,
    )
    assert error.cause == "batchnorm-single-sample"
    assert error.location["line"] == line_of(lines, "net(x)")
    dataset = error.runtime["dataset"]
    assert dataset["loader"]["line"] == line_of(lines, "loader = DataLoader")
    assert (dataset["indices"], dataset["batch_step"], dataset["batches_in_epoch"]) == ([8], 3, 3)
    text = " ".join(str(error).split())  # (the report wraps its lines)
    assert f"train.py:{line_of(lines, 'loader = DataLoader')} (batch_size=4, drop_last=False)" in text
    assert "leaves a last batch of 1 of its 9 samples: pass drop_last=True" in text
    assert module_sites(error) == ([line_of(lines, "net = nn.Sequential")], "nn.BatchNorm1d(num_features=4)")


def test_a_flatten_that_changed_the_batch_size_is_named_in_the_models_forward(tmp_path):
    error, lines = run_script(
        tmp_path,
        """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(1, 4, 3)
                self.fc = nn.Linear(4 * 4 * 8, 10)

            def forward(self, x):
                x = self.conv(x)
                x = x.view(-1, 4 * 4 * 8)
                return self.fc(x)

        out = Net()(torch.randn(8, 1, 6, 6))
        loss = nn.functional.cross_entropy(out, torch.zeros(8, dtype=torch.long))
        """,
    )
    assert error.cause == "batch-size-mismatch"
    assert error.runtime["frames"][0]["line"] == line_of(lines, "loss = nn.functional.cross_entropy")
