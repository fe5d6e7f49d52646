"""Progress of long `scan` runs: drawn on a terminal's stderr (a real pseudo-terminal) with
the rate and the time left, absent when stderr is a pipe; the report on stdout is the same
either way. (`check`'s line is tested the same way in tests/progress.rs.)"""

import os
import pty
import subprocess
import sys
import textwrap

import pytest
from conftest import assertscope_binary

pytest.importorskip("torch")

LABELS = """
import torch
from torch.utils.data import DataLoader, TensorDataset

y = torch.arange(600) % 5
loader = DataLoader(TensorDataset(torch.zeros(600, 3), y), batch_size=4)
"""


def scan(module, stderr, *flags):
    argv = [assertscope_binary(), "scan", f"{module}:loader", "--num-classes", "5", "--python", sys.executable, "--color", "never", *flags]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr, cwd=module.parent)


def on_a_terminal(module, *flags):
    master, slave = pty.openpty()
    proc = scan(module, slave, *flags)
    os.close(slave)  # the child holds the only copy: reading ends (EIO) once it exits
    drawn = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        drawn += chunk
    os.close(master)
    stdout = proc.stdout.read()
    assert proc.wait(timeout=300) == 0, drawn
    return stdout.decode(), drawn.decode(errors="replace")


def test_scan_draws_its_progress_on_a_terminal_and_nothing_on_a_pipe(tmp_path):
    module = tmp_path / "labels.py"
    module.write_text(textwrap.dedent(LABELS))
    report, terminal = on_a_terminal(module)
    lines = [part for part in terminal.split("\r") if part.startswith("scan: batch")]
    assert lines, terminal
    assert all("/150 [" in line for line in lines), lines
    assert any("samples/s" in line and "ETA " in line for line in lines), lines
    assert "scan: 150 batches, 600 samples in " in terminal

    piped = scan(module, subprocess.PIPE)
    stdout, stderr = piped.communicate(timeout=300)
    assert piped.returncode == 0, stderr
    assert b"scan: " not in stderr and b"ETA" not in stderr, stderr
    assert stdout.decode() == report


def test_scan_no_progress_keeps_a_terminal_quiet(tmp_path):
    module = tmp_path / "labels.py"
    module.write_text(textwrap.dedent(LABELS))
    _, terminal = on_a_terminal(module, "--no-progress")
    assert "scan: " not in terminal and "ETA" not in terminal, terminal
