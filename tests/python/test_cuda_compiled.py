"""On a CUDA machine: the guard inside torch.compile'd models (Inductor/Triton). The
asynchronous check adds no host-device synchronisation and no graph break, a bad id or label
raises a GuardError instead of a device-side assert in the generated kernel, the CUDA context
stays healthy, and clean runs are bit-identical with and without the guard.
Skipped where there is no GPU (scripts/gpu-check runs it where there is)."""

import pytest
import torch

import assertscope
from assertscope import GuardError
from assertscope._guard import compiled

from conftest import check_point
from test_guard_compiled import BAD_LOOKUPS, LookupModel, TaggerLM, line_of, lookup_batch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@pytest.fixture(autouse=True)
def fresh_compiler():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def cuda_batch():
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 9, (4, 6), generator=generator).cuda()
    labels = torch.randint(0, 3, (4, 6), generator=generator).cuda()
    return ids, labels


def compiled_model():
    torch.manual_seed(0)
    return torch.compile(TaggerLM().cuda())


def test_async_guard_in_compiled_code_adds_no_sync():
    model = compiled_model()
    ids, labels = cuda_batch()
    assertscope.guard(mode="auto")
    model(ids, labels, 0).backward()  # compile outside the sync check: compilation may sync
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(3):
            model(ids, labels, 0).backward()
    finally:
        torch.cuda.set_sync_debug_mode("default")


@pytest.mark.parametrize("mode", ["sync", "auto"])
def test_bad_id_in_compiled_code_is_caught_without_a_device_assert(mode):
    assertscope.guard(mode=mode)
    model = compiled_model()
    ids, labels = cuda_batch()
    model(ids, labels, 0).backward()
    with pytest.raises(GuardError) as caught:
        model(ids, labels, 5)
        check_point()
    error = caught.value
    assert (error.cause, error.op) == ("embedding-index-out-of-range", "embedding")
    assert error.location["line"] == line_of(TaggerLM.forward, "hidden = self.embed(ids + shift)")
    assert error.values["max"] == int(ids.max()) + 5
    torch.cuda.synchronize()  # raises if a kernel asserted: the context must be healthy
    assert torch.ones(3, device="cuda").sum().item() == 3


def test_bad_label_in_compiled_code_is_caught():
    assertscope.guard(mode="sync")
    model = compiled_model()
    ids, labels = cuda_batch()
    labels[1, 1] = 7
    with pytest.raises(GuardError) as caught:
        model(ids, labels, 0)
    assert (caught.value.cause, caught.value.values["max"], caught.value.values["bound"]) == ("target-out-of-range", 7, 3)


def test_clean_compiled_cuda_runs_are_identical_and_unbroken():
    ids, labels = cuda_batch()
    runs = []
    for guarded in (False, True):
        torch._dynamo.reset()
        if guarded:
            assertscope.guard()
        model = compiled_model()
        loss = model(ids, labels, 0)
        loss.backward()
        runs.append((loss.detach(), [p.grad.clone() for p in model.parameters()]))
        torch.manual_seed(0)
        explained = torch._dynamo.explain(TaggerLM().cuda())(ids, labels, 0)
        runs[-1] += ((explained.graph_count, explained.graph_break_count),
                     [compiled.guarded_ops_in(g) for g in explained.graphs])
    (plain_loss, plain_grads, plain_breaks, plain_ops), (loss, grads, breaks, ops) = runs
    assert torch.equal(plain_loss, loss) and all(torch.equal(a, b) for a, b in zip(plain_grads, grads))
    assert plain_breaks == breaks == (1, 0)
    assert (plain_ops, ops) == ([0], [3])


def cuda_lookup_batch():
    return tuple(t.cuda() for t in lookup_batch())


def compiled_lookup_model():
    torch.manual_seed(0)
    return torch.compile(LookupModel().cuda())


def test_async_guard_of_compiled_lookups_adds_no_sync():
    # embedding_bag, x[idx], x[idx] = v and one_hot inside the graph
    model = compiled_lookup_model()
    batch = cuda_lookup_batch()
    assertscope.guard(mode="auto")
    model(*batch).backward()
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(3):
            model(*batch).backward()
    finally:
        torch.cuda.set_sync_debug_mode("default")


@pytest.mark.parametrize("case", list(BAD_LOOKUPS))
def test_bad_lookup_in_compiled_code_is_caught_without_a_device_assert(case):
    argument, bad, op, cause, code, values = BAD_LOOKUPS[case]
    assertscope.guard(mode="auto")  # asynchronous on CUDA: the repaired index reaches the kernel
    model = compiled_lookup_model()
    args = dict(zip(("ids", "offsets", "rows", "labels"), cuda_lookup_batch()))
    model(**args).backward()
    args[argument] = torch.tensor(bad, device="cuda")
    with pytest.raises(GuardError) as caught:
        model(**args)
        check_point()
    error = caught.value
    assert (error.op, error.cause, error.location["code"]) == (op, cause, code)
    assert tuple(error.values[k] for k in ("min", "max", "bound", "bad_count")) == values
    torch.cuda.synchronize()  # raises if a kernel asserted: the context must be healthy
    assert torch.ones(3, device="cuda").sum().item() == 3


def test_clean_compiled_cuda_lookups_are_identical_and_unbroken():
    batch = cuda_lookup_batch()
    runs = []
    for guarded in (False, True):
        torch._dynamo.reset()
        if guarded:
            assertscope.guard()
        model = compiled_lookup_model()
        loss = model(*batch)
        loss.backward()
        torch.manual_seed(0)
        explained = torch._dynamo.explain(LookupModel().cuda())(*batch)
        runs.append((loss.detach(), [p.grad.clone() for p in model.parameters()],
                     (explained.graph_count, explained.graph_break_count),
                     [compiled.guarded_ops_in(g) for g in explained.graphs]))
    (plain_loss, plain_grads, plain_breaks, plain_ops), (loss, grads, breaks, ops) = runs
    assert torch.equal(plain_loss, loss) and all(torch.equal(a, b) for a, b in zip(plain_grads, grads))
    assert plain_breaks == breaks == (1, 0)
    assert (plain_ops, ops) == ([0], [4])
