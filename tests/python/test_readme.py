"""The README stays true: every command of its checklist table runs on the bundled
examples and finds what the table says, and every example is documented."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import assertscope_binary

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()


def checklist():
    section = README.split("### The checklist", 1)[1].split("\n### ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[1].startswith("`assertscope "):
            rows.append((cells[0], cells[1].strip("`"), cells[2].strip("`")))
    return rows


ROWS = checklist()


def test_the_table_has_every_step_of_the_checklist():
    steps = [step for step, _, _ in ROWS]
    assert len(ROWS) >= 8, ROWS
    for n in range(1, 6):
        assert any(step.startswith(f"{n}. ") for step in steps), (n, steps)


@pytest.mark.parametrize("step,command,finds", ROWS, ids=[r[1].split()[1] + ":" + r[0][:12] for r in ROWS])
def test_each_checklist_command_finds_what_the_table_says(step, command, finds, tmp_path):
    argv = shlex.split(command)
    argv[0] = assertscope_binary()
    argv = [sys.executable if a == "python" else a for a in argv]
    env = {
        **os.environ,
        "NO_COLOR": "1",
        "OMP_NUM_THREADS": "1",
        "ASSERTSCOPE_TMPDIR": str(tmp_path),
        # `scan` and `doctor` use the `python` on PATH, as for a user in an activated venv.
        "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
    }
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, env=env, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode in (0, 1), f"{command} exited {proc.returncode}:\n{out[-3000:]}"
    assert "panicked" not in out
    assert finds in out, f"{command} does not show {finds!r}:\n{out[-3000:]}"


def test_every_example_is_documented_with_its_command():
    section = README.split("### Examples", 1)[1].split("\n## ", 1)[0]
    for path in sorted(REPO.joinpath("examples").rglob("*")):
        if path.is_file():
            name = path.relative_to(REPO / "examples").as_posix()
            assert re.search(rf"^- `{re.escape(name)}`: ", section, re.M), f"examples/{name} is not in the README"
