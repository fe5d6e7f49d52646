"""The guard inside torch.compile'd models (Inductor on the CPU), and what it leaves to PyTorch
in TorchScript. The GPU variant of these checks runs in scripts/gpu-check."""

import inspect

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import assertscope
from assertscope import GuardError
from assertscope._guard import compiled

from conftest import check_point

pytestmark = pytest.mark.skipif(not hasattr(torch, "compile"), reason="torch.compile needs torch >= 2.0")


class TaggerLM(nn.Module):
    """Token ids in, per-token class scores out: an embedding, a gather over a computed index,
    and the loss, all inside the compiled region."""

    def __init__(self, vocab=10, classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, 8)
        self.head = nn.Linear(8, classes)

    def forward(self, ids, labels, shift):
        hidden = self.embed(ids + shift)
        picked = hidden.gather(1, (ids % 2).unsqueeze(-1).expand(-1, -1, 8))
        logits = self.head(hidden + picked)
        return F.cross_entropy(logits.flatten(0, 1), labels.flatten())


def line_of(obj, text):
    lines, first = inspect.getsourcelines(obj)
    return first + next(i for i, line in enumerate(lines) if text in line)


def batch():
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 9, (4, 6), generator=generator)
    labels = torch.randint(0, 3, (4, 6), generator=generator)
    return ids, labels


@pytest.fixture
def fresh_compiler():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def compiled_model():
    torch.manual_seed(0)
    return torch.compile(TaggerLM())


# "auto" too: on the CPU the default mode leaves eager calls to PyTorch's kernels, but
# Inductor's generated code checks nothing, so compiled calls are checked first.
@pytest.mark.parametrize("mode", ["auto", "sync"])
def test_bad_embedding_id_inside_a_compiled_model(fresh_compiler, mode):
    assertscope.guard(mode=mode)
    model = compiled_model()
    ids, labels = batch()
    model(ids, labels, 0).backward()  # a clean step first: the graph is compiled and reused
    # The id only goes bad inside the compiled region (ids + shift): no boundary check sees it.
    with pytest.raises(GuardError) as caught:
        model(ids, labels, 5)
    error = caught.value
    assert (error.cause, error.op) == ("embedding-index-out-of-range", "embedding")
    assert error.location["line"] == line_of(TaggerLM.forward, "hidden = self.embed(ids + shift)")
    assert error.location["function"] == "forward"
    assert error.location["code"] == "hidden = self.embed(ids + shift)"
    expected_bad = int(((ids + 5) >= 10).sum())
    assert expected_bad > 0
    assert (error.values["max"], error.values["bound"], error.values["bad_count"]) == (int(ids.max()) + 5, 10, expected_bad)


@pytest.mark.parametrize("mode", ["auto", "sync"])
def test_bad_class_target_inside_a_compiled_model(fresh_compiler, mode):
    assertscope.guard(mode=mode)
    model = compiled_model()
    ids, labels = batch()
    labels[2, 5] = 3  # three classes: 3 is one past the end
    with pytest.raises(GuardError) as caught:
        model(ids, labels, 0)
    error = caught.value
    assert (error.cause, error.op) == ("target-out-of-range", "cross_entropy")
    assert error.location["line"] == line_of(TaggerLM.forward, "return F.cross_entropy(")
    assert (error.values["max"], error.values["bound"], error.values["bad_count"]) == (3, 3, 1)
    assert "3 at [17]" in " ".join(str(error).split())  # row 2, column 5 of the flattened [4, 6] labels


def test_async_mode_repairs_the_compiled_call_and_reports_at_the_next_check_point(fresh_compiler):
    assertscope.guard(mode="async")
    model = compiled_model()
    ids, labels = batch()
    ids[0, 0] = 25
    # The embedding runs on a repaired copy (no out-of-range read in the generated code); the
    # failure is raised at the next check point: on the CPU, the gather's check in the same graph.
    with pytest.raises(GuardError) as caught:
        model(ids, labels, 0)
        check_point()
    error = caught.value
    assert (error.cause, error.values["max"], error.values["bad_count"]) == ("embedding-index-out-of-range", 25, 1)
    assert error.location["line"] == line_of(TaggerLM.forward, "hidden = self.embed(ids + shift)")
    assert "asynchronous guard" in " ".join(str(error).split())


def flat_lookup_after_a_break(x, idx):
    doubled = x * 2
    torch._dynamo.graph_break()
    return torch.take(doubled, idx)


def test_an_op_after_a_graph_break_is_checked_and_named_by_its_own_function(fresh_compiler):
    assertscope.guard(mode="sync")
    lookup = torch.compile(flat_lookup_after_a_break)
    x = torch.arange(6.0).view(2, 3)
    assert torch.equal(lookup(x, torch.tensor([0, 5])), torch.tensor([0.0, 10.0]))
    with pytest.raises(GuardError) as caught:
        lookup(x, torch.tensor([0, 6]))
    error = caught.value
    assert (error.op, error.values["max"], error.values["bad_count"]) == ("take", 6, 1)
    # Dynamo calls the rest of the function torch_dynamo_resume_in_...: the report does not.
    assert error.location["function"] == "flat_lookup_after_a_break"
    assert error.location["line"] == line_of(flat_lookup_after_a_break, "return torch.take(doubled, idx)")


def test_a_later_guard_session_still_checks_compiled_ops(fresh_compiler):
    # Dynamo's table of torch functions is built once; built during an earlier guard session it
    # knew that session's wrappers only, and broke the graph at (and skipped the check of) every
    # guarded op of later sessions.
    ids = torch.tensor([0, 5])
    with assertscope.guard():
        # The first compilation of the process builds the table.
        torch._dynamo.trace_rules.clear_lru_cache()
        torch.compile(TaggerLM(), backend="eager")(torch.tensor([[1, 2]]), torch.tensor([[0, 1]]), 0)
    torch._dynamo.reset()
    assertscope.guard(mode="sync")
    explained = torch._dynamo.explain(flat_lookup_after_a_break)(torch.ones(2, 3), ids)
    assert (explained.graph_count, explained.graph_break_count) == (2, 1)
    assert [compiled.guarded_ops_in(graph) for graph in explained.graphs] == [0, 1]


def step_results(model, ids, labels):
    loss = model(ids, labels, 0)
    loss.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    return loss.detach(), grads


def test_clean_compiled_runs_are_identical_with_and_without_the_guard(fresh_compiler):
    ids, labels = batch()
    plain = step_results(compiled_model(), ids, labels)
    torch._dynamo.reset()
    assertscope.guard(mode="sync")
    guarded = step_results(compiled_model(), ids, labels)
    assert torch.equal(plain[0], guarded[0])
    assert all(torch.equal(a, b) for a, b in zip(plain[1], guarded[1]))


def test_the_checks_compile_into_the_graph_without_graph_breaks(fresh_compiler):
    ids, labels = batch()
    torch.manual_seed(0)
    model = TaggerLM()
    plain = torch._dynamo.explain(model)(ids, labels, 0)
    torch._dynamo.reset()
    assertscope.guard()
    guarded = torch._dynamo.explain(model)(ids, labels, 0)
    assert (guarded.graph_count, guarded.graph_break_count) == (plain.graph_count, plain.graph_break_count) == (1, 0)
    # The explained graph is the one the backend received: embedding, gather and the loss checked.
    assert [compiled.guarded_ops_in(graph) for graph in guarded.graphs] == [3]
    assert [compiled.guarded_ops_in(graph) for graph in plain.graphs] == [0]


def test_switching_the_guard_off_unhooks_the_compiler(fresh_compiler):
    assertscope.guard()
    assertscope.unguard()
    ids, labels = batch()
    explained = torch._dynamo.explain(TaggerLM())(ids, labels, 0)
    assert [compiled.guarded_ops_in(graph) for graph in explained.graphs] == [0]


@torch.jit.script
def scripted_lookup(weight: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    return F.embedding(ids, weight)


def test_torchscript_is_not_guarded_and_pytorch_raises_its_own_error():
    # TorchScript runs its graph in C++: the guard cannot see inside it (see _guard/compiled/). On
    # the CPU PyTorch's own check still raises, and never a GuardError.
    assertscope.guard(mode="sync")
    weight = torch.randn(10, 4)
    assert torch.equal(scripted_lookup(weight, torch.tensor([1, 9])), weight[[1, 9]])
    with pytest.raises((IndexError, RuntimeError), match="index out of range in self") as caught:
        scripted_lookup(weight, torch.tensor([1, 12]))
    assert not isinstance(caught.value, GuardError)


def test_assertscope_run_guards_a_compiled_training_script(tmp_path):
    # The injected guard (as `assertscope run` starts it) reaches a model compiled by the script.
    import json
    import os
    import subprocess
    import sys

    from conftest import assertscope_binary

    scripts = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")
    proc = subprocess.run(
        [assertscope_binary(), "run", "--json", "--grace", "300", "--", sys.executable, "compiled_tagger.py", "bad-label"],
        cwd=scripts, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=900,
        env={**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""},
    )
    assert proc.returncode == 1, proc.stderr.decode()[-3000:]
    root = json.loads(proc.stdout)["diagnoses"][0]
    assert (root["cause"], root["op"]) == ("target-out-of-range", "cross_entropy")
    assert (root["location"]["file"], root["location"]["function"]) == ("compiled_tagger.py", "forward")
    assert root["location"]["code"] == "return F.cross_entropy(logits.flatten(0, 1), labels.flatten())"
    assert (root["values"]["max"], root["values"]["bound"], root["values"]["bad_count"]) == (5, 5, 1)
    assert b"step 1 " in proc.stderr and b"step 2 " not in proc.stderr


class LookupModel(nn.Module):
    """The index-heavy ops of a compiled model: an EmbeddingBag (ids and offsets), tensor
    indexing read (`table[rows + 1]`, with an index computed inside the compiled region) and
    written (`scores[rows] = pooled`), and one_hot."""

    def __init__(self, vocab=10, rows=8, classes=4):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, classes, mode="mean")
        self.table = nn.Parameter(torch.randn(rows, classes))
        self.rows = rows

    def forward(self, ids, offsets, rows, labels):
        pooled = self.bag(ids, offsets)
        picked = self.table[rows + 1]
        scores = pooled.new_zeros(self.rows, pooled.shape[1])
        scores[rows] = pooled
        hot = F.one_hot(labels, pooled.shape[1]).float()
        return ((pooled + picked) * hot).sum() + scores.pow(2).sum()


def lookup_batch():
    return torch.tensor([1, 2, 3, 4, 5, 6]), torch.tensor([0, 2, 4]), torch.tensor([0, 3, 6]), torch.tensor([0, 3, 1])


def compiled_lookup_model():
    torch.manual_seed(0)
    return torch.compile(LookupModel())


BAD_LOOKUPS = {
    # case: (argument, bad value, op, cause, the line, (min, max, bound, bad_count))
    "index read": ("rows", [0, 3, 7], "index", "index-out-of-bounds", "picked = self.table[rows + 1]", (1, 8, 8, 1)),
    "index write": ("rows", [0, -9, 6], "index", "index-out-of-bounds", "scores[rows] = pooled", (-9, 6, 8, 1)),
    "bag id": ("ids", [1, 2, 3, 12, 5, 6], "embedding_bag", "embedding-index-out-of-range", "pooled = self.bag(ids, offsets)", (1, 12, 10, 1)),
    "one_hot class": ("labels", [0, 4, 1], "one_hot", "target-out-of-range", "hot = F.one_hot(labels, pooled.shape[1]).float()", (0, 4, 4, 1)),
}


@pytest.mark.parametrize("case", list(BAD_LOOKUPS))
def test_a_bad_index_inside_a_compiled_model_is_caught_with_op_line_and_values(fresh_compiler, case):
    argument, bad, op, cause, code, values = BAD_LOOKUPS[case]
    assertscope.guard(mode="sync")
    model = compiled_lookup_model()
    args = dict(zip(("ids", "offsets", "rows", "labels"), lookup_batch()))
    model(**args).backward()  # a clean step first: the graph is compiled and reused
    args[argument] = torch.tensor(bad)
    with pytest.raises(GuardError) as caught:
        model(**args)
    error = caught.value
    assert (error.op, error.cause) == (op, cause)
    assert (error.location["function"], error.location["code"]) == ("forward", code)
    assert error.location["line"] == line_of(LookupModel.forward, code)
    assert tuple(error.values[k] for k in ("min", "max", "bound", "bad_count")) == values
    # A guarded error is also the exception PyTorch raises for it on the CPU.
    if op == "index":
        assert isinstance(error, IndexError)


def test_bad_embedding_bag_offsets_inside_a_compiled_model(fresh_compiler):
    assertscope.guard(mode="sync")
    model = compiled_lookup_model()
    ids, _, rows, labels = lookup_batch()
    with pytest.raises(GuardError) as caught:
        model(ids, torch.tensor([0, 4, 2]), rows, labels)  # offsets go down at [2]
    error = caught.value
    assert (error.op, error.location["code"]) == ("embedding_bag", "pooled = self.bag(ids, offsets)")
    assert (error.values["positions"], error.values["bad_values"], error.values["bound"]) == ([[2]], [2], 6)


def test_async_mode_repairs_a_compiled_index_and_reports_at_the_next_check_point(fresh_compiler):
    # Forced async on the CPU takes the path of CUDA tensors: the generated code reads a
    # repaired index (no out-of-range read, no abort), the failure comes at a check point.
    assertscope.guard(mode="async")
    model = compiled_lookup_model()
    ids, offsets, _, labels = lookup_batch()
    # rows + 1 reaches 8 in a table of 8 rows; the write with rows itself is fine. On the CPU
    # the next check point is the write's check, in the same graph.
    with pytest.raises(GuardError) as caught:
        model(ids, offsets, torch.tensor([0, 3, 7]), labels)
        check_point()
    error = caught.value
    assert (error.op, error.values["max"], error.values["bad_count"]) == ("index", 8, 1)
    assert error.location["code"] == "picked = self.table[rows + 1]"
    assert "asynchronous guard" in " ".join(str(error).split())


def lookup_step(model, args):
    loss = model(*args)
    loss.backward()
    return loss.detach(), [p.grad.clone() for p in model.parameters()]


def test_clean_compiled_lookups_are_identical_with_and_without_the_guard(fresh_compiler):
    plain = lookup_step(compiled_lookup_model(), lookup_batch())
    torch._dynamo.reset()
    assertscope.guard(mode="sync")
    guarded = lookup_step(compiled_lookup_model(), lookup_batch())
    assert torch.equal(plain[0], guarded[0])
    assert all(torch.equal(a, b) for a, b in zip(plain[1], guarded[1]))


def test_lookup_checks_compile_into_the_graph_without_graph_breaks(fresh_compiler):
    torch.manual_seed(0)
    model = LookupModel()
    plain = torch._dynamo.explain(model)(*lookup_batch())
    torch._dynamo.reset()
    assertscope.guard()
    guarded = torch._dynamo.explain(model)(*lookup_batch())
    assert (guarded.graph_count, guarded.graph_break_count) == (plain.graph_count, plain.graph_break_count) == (1, 0)
    # embedding_bag, the index read, the index write and one_hot
    assert [compiled.guarded_ops_in(graph) for graph in guarded.graphs] == [4]


class CtcModel(nn.Module):
    def __init__(self, classes=5):
        super().__init__()
        self.head = nn.Linear(4, classes)

    def forward(self, frames, targets, input_lengths, target_lengths):
        log_probs = self.head(frames).log_softmax(-1)
        loss = F.ctc_loss(log_probs, targets, input_lengths, target_lengths)
        return loss * 2


def test_ctc_loss_in_a_compiled_model_is_checked_where_pytorch_breaks_the_graph(fresh_compiler):
    # PyTorch never puts ctc_loss in a graph (its kernel's output shapes depend on the lengths'
    # values): the compiled function runs it between two graphs, where Dynamo would compile
    # the guard's wrapper with its check folded away unless told not to trace it.
    frames = torch.randn(12, 2, 4)
    targets = torch.tensor([[1, 2, 3, 4], [2, 2, 1, 0]])
    lengths = (torch.tensor([12, 10]), torch.tensor([4, 3]))
    torch.manual_seed(0)
    plain = torch._dynamo.explain(CtcModel())(frames, targets, *lengths)
    torch._dynamo.reset()
    assertscope.guard(mode="sync")
    torch.manual_seed(0)
    model = CtcModel()
    guarded = torch._dynamo.explain(model)(frames, targets, *lengths)
    assert (guarded.graph_count, guarded.graph_break_count) == (plain.graph_count, plain.graph_break_count) == (2, 1)
    torch._dynamo.reset()
    step = torch.compile(model)
    step(frames, targets, *lengths).backward()
    targets[1, 1] = 5  # C = 5 classes: 5 is one past the end
    with pytest.raises(GuardError) as caught:
        step(frames, targets, *lengths)
    error = caught.value
    assert (error.op, error.cause, error.values["bad_values"]) == ("ctc_loss", "ctc-loss", [5])
    assert error.location["code"] == "loss = F.ctc_loss(log_probs, targets, input_lengths, target_lengths)"
    assert error.location["line"] == line_of(CtcModel.forward, "loss = F.ctc_loss(")
