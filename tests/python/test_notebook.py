"""`%load_ext assertscope` in a real IPython kernel executing a real notebook (nbclient),
and in a plain terminal IPython."""

import os
import re
import subprocess
import sys
import textwrap

import ipykernel  # noqa: F401  (the kernel nbclient starts; tests/requirements.txt has it)
import nbclient
import nbformat
import pytest
from snapshots import assert_snapshot

BAD_LABEL = """\
import torch
torch.manual_seed(0)
logits = torch.randn(4, 3)
labels = torch.tensor([0, 2, 3, 1])
loss = torch.nn.functional.cross_entropy(logits, labels)
print("not reached")"""

# The exception PyTorch raises at the first CUDA call after a kernel asserted
# (c10/cuda/CUDAException.cpp with the cudaErrorAssert text).
CUDA_ASSERT = """\
message = (
    "CUDA error: device-side assert triggered\\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, "
    "so the stacktrace below might be incorrect.\\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\\n"
)
def train_step():
    raise torch.AcceleratorError(message)
train_step()"""

PLAIN_ERROR = """\
config = {"lr": 0.1}
config["batch_size"]"""

ON_CPU = """\
import assertscope
assertscope.on_cpu()
x = torch.ones(3, device="cuda")
model = torch.nn.Linear(3, 2).cuda()
print("device", model(x).device, torch.cuda.is_available())"""


def outputs(cell):
    """(stream text, html, error) of an executed cell."""
    text, html, error = "", "", None
    for out in cell.outputs:
        if out.output_type == "stream":
            text += out.text
        elif out.output_type in ("display_data", "execute_result"):
            html += out.data.get("text/html", "")
            text += out.data.get("text/plain", "")
        elif out.output_type == "error":
            error = out
    return text, html, error


@pytest.fixture(scope="module")
def notebook(tmp_path_factory):
    cells = ["%load_ext assertscope", BAD_LABEL, "%assertscope", CUDA_ASSERT, "%explain", ON_CPU, PLAIN_ERROR, "%assertscope"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path_factory.mktemp("nb") / "train.ipynb"
    nbformat.write(nb, str(path))
    client = nbclient.NotebookClient(
        nbformat.read(str(path), as_version=4),
        timeout=300,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(path.parent)}},
    )
    return client.execute().cells


def test_a_guard_error_is_its_traceback_then_its_report_as_text_and_html(notebook):
    text, html, error = outputs(notebook[1])
    assert error is not None and error.ename == "GuardError", (text, error)
    assert "not reached" not in text
    headline = "error[target-out-of-range]: class target out of range in cross_entropy"
    # The traceback, without the guard's frames, ends in the report's first line.
    frames = "\n".join(error.traceback)
    assert "assertscope" not in frames.replace(headline, ""), frames
    assert re.sub(r"\x1b\[[0-9;]*m", "", error.traceback[-1]).strip() == f"GuardError: {headline}", error.traceback
    # Below it the report: for a text front end the terminal's text, for a browser the same
    # lines as HTML; the cell named as IPython names it, the code spans as code.
    assert text.startswith(headline) and "--> Cell In[2]:5:1" in text and "= found: 1 of 4 targets outside [0, 3)" in text, text
    assert "fix: A label of 3 needs 4 classes" in text, text
    assert "<code>len(label2id)</code>" in html and "`" not in html, html
    assert strip_tags(html) == text.replace("`", ""), (strip_tags(html), text)
    assert_snapshot("notebook__guard_error_text", text, "tests/python/test_notebook.py")
    assert_snapshot("notebook__guard_error_html", html, "tests/python/test_notebook.py")


def strip_tags(html):
    import html as html_module

    return html_module.unescape(re.sub(r"<[^>]+>", "", html))


def test_the_magic_shows_the_last_guard_error_again(notebook):
    text, html, error = outputs(notebook[2])
    assert error is None and "1 of 4 targets outside [0, 3)" in html and text == outputs(notebook[1])[0]


def test_the_magic_says_in_plain_words_that_a_plain_error_holds_no_tensor(notebook):
    assert outputs(notebook[6])[2].ename == "KeyError"
    text, _, error = outputs(notebook[7])
    assert error is None, error
    assert "the last exception (KeyError: 'batch_size') is a plain Python error, not a tensor or CUDA error" in text, text
    assert "log" not in text, text


def test_explain_of_a_cuda_assert_says_to_restart_the_kernel(notebook):
    assert outputs(notebook[3])[2].ename == "AcceleratorError"
    text, _, error = outputs(notebook[4])
    assert error is None, error
    # A device-side assert with no assertion line in the cell's output is a follow-on
    # (cascade) warning, or an error where the assertion was printed.
    assert "device-side assert triggered" in text and ("error[" in text or "warning[cascade]" in text), text
    assert "Restart the kernel" in text, text


def test_on_cpu_runs_cuda_code_in_the_kernel(notebook):
    text, _, error = outputs(notebook[5])
    assert error is None, error
    assert "device cpu" in text, text


def test_terminal_ipython_prints_the_report_as_text(tmp_path):
    code = "%load_ext assertscope\n" + BAD_LABEL
    script = tmp_path / "session.ipy"
    script.write_text(code)
    run = subprocess.run(
        [sys.executable, "-m", "IPython", "--no-banner", "--colors=nocolor", "--simple-prompt", str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=300,
    )
    out = run.stdout + run.stderr
    assert "GuardError: error[target-out-of-range]: class target out of range in cross_entropy" in out, out
    assert "= found: 1 of 4 targets outside [0, 3)" in out and "<div" not in out and "<pre" not in out, out
    assert "assertscope/_guard" not in out, out
    assert "\nnot reached\n" not in out, out
