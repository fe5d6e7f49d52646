"""The labelled buggy projects of tests/fixtures/origin_projects stay what their labels say:
every case, run with plain Python, crashes with the labelled exception at the labelled crash
line, and every labelled location is a real line of the case's files. (The scores of
assertscope on the set are bench/origin/score_projects.py's business, not this test's.)

The cases run in parallel subprocesses, all at once in one fixture, so the whole file takes
about as long as its slowest few cases."""

import importlib.util
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

PROJECTS = Path(__file__).resolve().parents[1] / "fixtures" / "origin_projects"


def load_cases_module():
    spec = importlib.util.spec_from_file_location("origin_project_cases", PROJECTS / "cases.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cases = load_cases_module()
CASES = cases.load()
IDS = [c.name for c in CASES]


def missing_packages(case):
    return [name for name in case.needs if importlib.util.find_spec(name) is None]


def run_plain(case):
    completed = subprocess.run(
        case.argv(sys.executable), cwd=case.folder, env=cases.environment(), capture_output=True, text=True, timeout=600
    )
    return completed.returncode, completed.stdout + completed.stderr


@pytest.fixture(scope="module")
def plain_runs(request):
    """{case name: (exit status, output)} of every runnable case this session tests, run at once."""
    wanted = {
        item.callspec.params["case"].name
        for item in request.session.items
        if getattr(item, "originalname", None) == "test_case_crashes_at_its_labelled_line_with_its_labelled_error"
    }
    runnable = [c for c in CASES if c.name in wanted and not missing_packages(c)]
    with ThreadPoolExecutor(max_workers=(os.cpu_count() or 2) + 1) as pool:
        return dict(zip((c.name for c in runnable), pool.map(run_plain, runnable)))


def source_lines(case, location):
    """The source lines a label location points into: a file's, or a notebook cell's."""
    file, _, line = location.rpartition(":")
    if "#" in file:
        notebook, _, cell = file.partition("#")
        with open(case.folder + os.sep + notebook, encoding="utf-8") as handle:
            code = [c for c in json.load(handle)["cells"] if c["cell_type"] == "code"]
        assert 1 <= int(cell) <= len(code), f"{case.name}: {location} names a cell the notebook does not have"
        return "".join(code[int(cell) - 1]["source"]).splitlines(), int(line)
    with open(os.path.join(case.folder, file), encoding="utf-8") as handle:
        return handle.read().splitlines(), int(line)


def test_the_set_has_the_size_and_mix_it_promises():
    real = [c for c in CASES if "real" in c.style]
    assert len(CASES) >= 44 and len(real) >= 22, (len(CASES), len(real))
    assert len(set(IDS)) == len(IDS)
    assert sorted(IDS) == sorted(p.name for p in PROJECTS.iterdir() if p.is_dir() and p.name not in ("LICENSES", "__pycache__"))
    for case in real:
        assert (Path(case.folder) / "NOTICE").is_file(), f"{case.name}: a real script needs its NOTICE"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_labelled_location_is_a_line_of_the_case(case):
    for location in [case.crash, case.origin, *case.alternatives, *case.moves]:
        lines, line = source_lines(case, location)
        assert 1 <= line <= len(lines) and lines[line - 1].strip(), f"{case.name}: {location} is not a line of code"
    assert case.origin not in case.moves and not set(case.alternatives) & set(case.moves), case.name
    if case.dataset_index != "-":
        compile(case.dataset_index, "dataset_index", "eval")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_case_crashes_at_its_labelled_line_with_its_labelled_error(case, plain_runs):
    if missing_packages(case):
        pytest.skip(f"{case.name} needs {', '.join(missing_packages(case))}")
    status, output = plain_runs[case.name]
    kind, frames = cases.last_traceback(output)
    assert status != 0 and kind is not None, f"{case.name} did not crash:\n{output[-3000:]}"
    assert kind.rpartition(".")[2] == case.exception, f"{case.name}: {kind}\n{output[-3000:]}"
    crash = cases.crash_location(case, frames)
    if "compiled" in case.style:
        # Inside a compiled graph Python shows the `def` line of the function that calls the
        # op; the label is the line in that function's body that calls it.
        assert inside_function(case, crash, case.crash), f"{case.name}: {case.crash} is not in the function at {crash}"
    else:
        assert crash == case.crash, f"{case.name} crashed at {crash}, labelled {case.crash}\n{output[-3000:]}"


def inside_function(case, def_location, location):
    """Whether `location` is in the body of the function whose `def` is at `def_location`."""
    if not def_location or def_location.rpartition(":")[0] != location.rpartition(":")[0]:
        return False
    lines, start = source_lines(case, def_location)
    end = int(location.rpartition(":")[2])
    head = lines[start - 1]
    indent = len(head) - len(head.lstrip())
    body = lines[start:end]
    return head.lstrip().startswith("def ") and start < end and all(
        not line.strip() or len(line) - len(line.lstrip()) > indent for line in body
    )
