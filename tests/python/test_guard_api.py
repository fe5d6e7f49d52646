"""The public API, and the ways user code reaches a guarded op."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.functional import cross_entropy as bound_before_guard  # bound before guard() runs

import assertscope
from assertscope import GuardError

from conftest import PYTHON_DIR


def test_import_is_cheap_and_does_not_import_torch():
    code = "import sys, time; t = time.perf_counter(); import assertscope; print(time.perf_counter() - t, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": PYTHON_DIR}).stdout.split()
    assert out[1] == "False"


def find_python(version):
    """A python<version> from PATH, or from pyenv when it has one installed."""
    import os
    import shutil

    python = shutil.which(f"python{version}")
    if python and subprocess.run([python, "-c", "pass"], capture_output=True).returncode == 0:
        return python
    if shutil.which("pyenv"):
        names = subprocess.run(["pyenv", "versions", "--bare"], capture_output=True, text=True).stdout.split()
        for name in names:
            if name == version or name.startswith(version + "."):
                prefix = subprocess.run(["pyenv", "prefix", name], capture_output=True, text=True).stdout.strip()
                candidate = os.path.join(prefix, "bin", f"python{version}")
                if os.path.exists(candidate):
                    return candidate
    return None


@pytest.mark.parametrize("version", ["3.9", "3.10"])
def test_old_pythons_import_the_package_and_read_the_kb(version):
    python = find_python(version)
    if python is None:
        pytest.skip(f"no python{version}")
    code = "import assertscope, assertscope.kb as kb; print(kb.cause('nan-inf')['checklist_step'], assertscope.GuardError.__mro__[1].__name__)"
    process = subprocess.run([python, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": PYTHON_DIR})
    assert process.stdout.split() == ["3", "RuntimeError"], process.stderr


def test_guard_as_a_call_and_as_a_context_manager():
    assert not assertscope.is_guarded()
    with assertscope.guard(mode="sync") as handle:
        assert assertscope.is_guarded()
        with assertscope.guard(mode="async"):
            assert "async" in repr(handle)
        assert "sync" in repr(handle)
    assert not assertscope.is_guarded()
    assert torch.gather is torch._C._VariableFunctions.gather
    assertscope.guard()
    assert assertscope.is_guarded()
    assertscope.unguard()
    assert not assertscope.is_guarded()


def test_bad_mode_is_refused():
    with pytest.raises(ValueError, match="mode must be one of auto, sync, async"):
        assertscope.guard(mode="fast")


def test_guard_error_is_a_runtime_error_and_survives_pickling():
    import pickle

    with assertscope.guard():
        with pytest.raises(RuntimeError) as info:
            F.one_hot(torch.tensor([2]), 2)
    error = pickle.loads(pickle.dumps(info.value))
    assert isinstance(error, GuardError)
    assert error.cause == "target-out-of-range" and error.diagnosis == info.value.diagnosis
    assert str(error) == str(info.value)
    assert GuardError("Caught GuardError in DataLoader worker").cause is None  # DataLoader re-raise


def test_reaches_module_calls_prebound_functions_and_tensor_methods():
    with assertscope.guard():
        with pytest.raises(GuardError) as module_call:
            nn.CrossEntropyLoss()(torch.randn(2, 3), torch.tensor([0, 3]))
        with pytest.raises(GuardError) as bound:
            bound_before_guard(torch.randn(2, 3), torch.tensor([0, 3]))
        with pytest.raises(GuardError) as method:
            torch.randn(2, 3).index_select(1, torch.tensor([3]))
        with pytest.raises(GuardError) as parameter:
            nn.Parameter(torch.randn(4))[torch.tensor([4])]
    assert module_call.value.location["code"] == "nn.CrossEntropyLoss()(torch.randn(2, 3), torch.tensor([0, 3]))"
    assert bound.value.op == "cross_entropy"
    assert method.value.op == "index_select"
    assert parameter.value.op == "index"


def test_location_is_the_users_line_inside_a_model():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(5, 2)

        def forward(self, ids):
            return self.emb(ids)  # the user's line

    with assertscope.guard():
        with pytest.raises(GuardError) as info:
            Model()(torch.tensor([5]))
    assert info.value.location["function"] == "forward"
    assert info.value.location["code"] == "return self.emb(ids)  # the user's line"


def test_untouched_ops_are_not_wrapped():
    with assertscope.guard():
        assert torch.matmul is torch._C._VariableFunctions.matmul
        assert torch.Tensor.add is torch._C.TensorBase.add
        assert F.linear is torch._C._nn.linear


def test_torchscript_and_tracing_still_work():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(5, 2)

        def forward(self, ids, labels):
            return F.cross_entropy(self.emb(ids), labels) + torch.gather(ids, 0, labels).sum()

    ids, labels = torch.tensor([1, 2]), torch.tensor([0, 1])
    with assertscope.guard():
        scripted = torch.jit.script(Model())
        traced = torch.jit.trace(Model(), (ids, labels))
        assert scripted(ids, labels).shape == traced(ids, labels).shape == ()


def test_values_of_a_tensor_subclass_are_left_alone():
    class Tagged(torch.Tensor):
        pass

    with assertscope.guard():
        index = torch.tensor([5]).as_subclass(Tagged)
        with pytest.raises(IndexError):
            torch.randn(3)[index]  # PyTorch's own error: the guard reads no subclass values


def test_plain_indexing_takes_the_fast_path(monkeypatch):
    from assertscope._guard.checks import advanced_index

    checked = []
    for name in ("run", "run_on_cpu"):  # the checking path, and the CPU kernel's
        real = getattr(advanced_index, name)
        monkeypatch.setattr(advanced_index, name, lambda *args, real=real: checked.append(args) or real(*args))
    x = torch.randn(10, 10)
    with assertscope.guard():
        x[3, 2:5], x[..., None], x[True], x[:, -1]
        x[1:3] = 0.0
        assert checked == []
        x[torch.tensor([1, 2])]
        x[:, [0, 9]] = 1.0
    assert len(checked) == 2


def test_torch_compile_traces_through_the_wrappers():
    embedding, head = nn.Embedding(10, 4), nn.Linear(4, 10)

    def loss_of(ids, labels):
        h = embedding(ids)
        return F.cross_entropy(head(h).view(-1, 10), labels.view(-1)) + h[:, torch.tensor([0])].sum() * 0

    ids = torch.randint(0, 10, (2, 5))
    expected = loss_of(ids, ids)
    with assertscope.guard():
        compiled = torch.compile(loss_of, backend="eager", fullgraph=True)
        assert torch.equal(compiled(ids, ids), expected)


def test_the_guard_modules_import_one_way():
    """Each module of the guard imports only those listed above it (no cycle, _install last)."""
    import ast

    order = ["_state", "_call", "_patching", "_verified", "_rules", "_analysis", "_failure", "_ledger",
             "_checkpoints", "_hooks", "_runner", "checks", "_install"]
    guard_dir = Path(assertscope.__file__).parent / "_guard"
    on_disk = {p.stem for p in guard_dir.glob("_*.py") if p.stem != "__init__"} | {"checks"}
    assert on_disk == set(order), "a new guard module needs its place in this order"
    for path in [*guard_dir.glob("_*.py"), *(guard_dir / "checks").glob("*.py")]:
        if path.stem == "__init__" and path.parent == guard_dir:
            continue
        me = "checks" if path.parent.name == "checks" else path.stem
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or node.level == 0:
                continue
            inside_checks = path.parent.name == "checks"
            if inside_checks and node.level == 1:
                continue  # checks/ among themselves
            if node.module:
                targets = [node.module.split(".")[0]]
            else:
                targets = [alias.name for alias in node.names]
            if (node.level == 2 and inside_checks) or (node.level == 1 and not inside_checks):
                for target in targets:
                    if target in order:
                        assert order.index(target) < order.index(me), f"{path.name} imports {target}"
