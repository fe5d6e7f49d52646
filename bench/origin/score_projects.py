"""Scores assertscope on the labelled buggy projects of tests/fixtures/origin_projects (real
open-source training scripts with one injected bug, and projects written for the set; see its
README.md): the crash line, the origin line, misleading "made here" spans, the dataset indices,
and `explain` on the plain Python output.

    python bench/origin/score_projects.py [--bin PATH] [--python PY] [--jobs N]
        [--json OUT] [--markdown OUT] [CASE...]

For each case:
- `run`: the case's entry runs under `assertscope run --json` from the case's folder (a
  notebook through run_notebook.py, which executes it in a real kernel with nbclient; the
  guard is injected into the kernel as into any child process).
  crash: the diagnosis' `location` is the labelled crash line.
  origin: the labelled origin line, or a labelled alternative, is the `location` or any
  `origin` entry (either JSON shape, see score.origin_steps).
  misleading: `origin` entries that claim the value was made there (role `data`, or `made` in
  the step-by-step shape) on a line labelled as one that only moves, casts, reshapes or
  unpacks the value.
  index: every dataset index the diagnosis names satisfies the label's predicate, and there is
  at least one (DataLoader cases only).
- `explain`: the case runs under plain Python, its output goes to `assertscope explain --json`.
  crash: the diagnosis' location is the labelled crash line; cause: the cause it names.

Cases that import packages missing from this interpreter (`needs:` in the style column) are
reported as skipped. Prints one row per case and the totals.
"""

import argparse
import datetime
import importlib.util
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import score  # noqa: E402 - the scorer of tests/fixtures/origin, whose functions this one shares

ROOT = score.ROOT
PROJECTS = os.path.join(ROOT, "tests", "fixtures", "origin_projects")


def load_cases_module():
    spec = importlib.util.spec_from_file_location("origin_project_cases", os.path.join(PROJECTS, "cases.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cases = load_cases_module()
CELL_NAME = re.compile(r"In ?\[(\d+)\]")  # IPython's name of a cell: "Cell In[3]", "<ipython-input-3-...>"


def notebook_cells(case):
    """{execution count: source lines} of the case's notebook, counted as a fresh run does."""
    with open(os.path.join(case.folder, case.entry[0]), encoding="utf-8") as handle:
        notebook = json.load(handle)
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    return {n: "".join(c["source"]).splitlines() for n, c in enumerate(code, start=1)}


def label_of(case, location, cells=None):
    """A diagnosis location as a label location (`FILE:LINE` relative to the case folder, or
    `NOTEBOOK#CELL:LINE`), or None when it is not in the case's own files."""
    if not location or not location.get("file") or not location.get("line"):
        return None
    file, line = location["file"], location["line"]
    if cells is not None and (file.startswith(("<", "Cell In", "Input In")) or "ipykernel" in file):
        cell = CELL_NAME.search(file)
        if cell:
            return f"{case.entry[0]}#{cell[1]}:{line}"
        code = (location.get("code") or "").strip()
        matches = [n for n, lines in cells.items() if 0 < line <= len(lines) and lines[line - 1].strip() == code]
        return f"{case.entry[0]}#{matches[0]}:{line}" if code and matches else None
    path = os.path.realpath(file if os.path.isabs(file) else os.path.join(case.folder, file))
    folder = os.path.realpath(case.folder)
    if not path.startswith(folder + os.sep):
        return None
    return f"{os.path.relpath(path, folder)}:{line}"


def run_case(binary, python, case):
    """The root diagnosis of the case under `assertscope run --json` (None if none)."""
    argv = [binary, "run", "--json", "--", *case.argv(python)]
    return score.root_diagnosis(score.run_json(argv, case.folder, env=cases.environment()))


def explain_case(binary, python, case):
    """The root diagnosis `explain` makes of the case's plain Python output."""
    plain = subprocess.run(
        case.argv(python), cwd=case.folder, env=cases.environment(), capture_output=True, text=True, timeout=600
    )
    completed = subprocess.run(
        [binary, "explain", "--json", "-"], input=plain.stdout + plain.stderr, capture_output=True, text=True, timeout=600
    )
    try:
        return score.root_diagnosis(json.loads(completed.stdout))
    except json.JSONDecodeError:
        return None


def missing_packages(case):
    return [name for name in case.needs if importlib.util.find_spec(name) is None]


def score_case(binary, python, case):
    missing = missing_packages(case)
    if missing:
        return {"case": case.name, "skipped": f"needs {', '.join(missing)}"}
    cells = notebook_cells(case) if case.notebook else None
    diagnosis = run_case(binary, python, case) or {}
    crash = label_of(case, diagnosis.get("location"), cells)
    steps = [(label_of(case, step, cells), step.get("role")) for step in score.origin_steps(diagnosis)]
    named = {crash} | {where for where, _ in steps}
    misleading = sorted({where for where, role in steps if role in score.CLAIM_ROLES and where in case.moves})
    explained = explain_case(binary, python, case) or {}
    loader_case = case.dataset_index != "-"
    return {
        "case": case.name,
        "source": "real" if "real" in case.style else "own",
        "cause": diagnosis.get("cause"),
        "crash_ok": crash == case.crash,
        "origin_ok": bool({case.origin, *case.alternatives} & named),
        "misleading": misleading,
        "loader_case": loader_case,
        "index_ok": score.index_right(diagnosis, case.bad_index) if loader_case else None,
        "explain_cause": explained.get("cause"),
        "explain_crash_ok": label_of(case, explained.get("location"), cells) == case.crash,
        "crash": crash,
        "named": sorted(where for where, _ in steps if where),
        "indices": score.dataset_indices(diagnosis),
    }


def mark(value):
    return "-" if value is None else ("ok" if value else "MISS")


def print_row(row):
    if "skipped" in row:
        print(f"{row['case']:34} skipped: {row['skipped']}", flush=True)
        return
    print(
        f"{row['case']:34} {str(row['cause']):30} crash={mark(row['crash_ok']):4} origin={mark(row['origin_ok']):4} "
        f"misleading={len(row['misleading'])} index={mark(row['index_ok']):4} "
        f"explain={mark(row['explain_crash_ok'])}/{row['explain_cause']} named={row['named']} indices={row['indices'][:8]}",
        flush=True,
    )


def summary(rows):
    scored = [r for r in rows if "skipped" not in r]
    loader = [r for r in scored if r["loader_case"]]

    def count(key, among=scored):
        return sum(bool(r[key]) for r in among)

    return {
        "cases": len(scored),
        "skipped": [r["case"] for r in rows if "skipped" in r],
        "real": sum(r["source"] == "real" for r in scored),
        "crash_line": count("crash_ok"),
        "origin_line": count("origin_ok"),
        "origin_line_real": count("origin_ok", [r for r in scored if r["source"] == "real"]),
        "origin_line_own": count("origin_ok", [r for r in scored if r["source"] == "own"]),
        "misleading_spans": sum(len(r["misleading"]) for r in scored),
        "cases_with_misleading_span": sum(bool(r["misleading"]) for r in scored),
        "loader_cases": len(loader),
        "dataset_index": count("index_ok", loader),
        "explain_crash_line": count("explain_crash_ok"),
        "explain_cause_named": sum(r["explain_cause"] not in (None, "none", "unknown-device-assert") for r in scored),
    }


def totals_text(t):
    n = max(t["cases"], 1)
    return (
        f"{t['cases']} cases ({t['real']} real): crash line {t['crash_line']}/{t['cases']} ({t['crash_line'] / n:.0%}), "
        f"origin line {t['origin_line']}/{t['cases']} ({t['origin_line'] / n:.0%}; real {t['origin_line_real']}, "
        f"own {t['origin_line_own']}), misleading spans {t['misleading_spans']} in {t['cases_with_misleading_span']} "
        f"cases, dataset index {t['dataset_index']}/{t['loader_cases']} DataLoader cases, explain: crash line "
        f"{t['explain_crash_line']}/{t['cases']}, a cause named {t['explain_cause_named']}/{t['cases']}"
        + (f"; skipped: {', '.join(t['skipped'])}" if t["skipped"] else "")
    )


def markdown(rows, totals, command):
    lines = [
        "# Origin scores on tests/fixtures/origin_projects",
        "",
        f"Command: `{command}`  ",
        f"Date: {datetime.date.today().isoformat()}",
        "",
        "| case | source | cause (run) | crash line | origin line | misleading spans | dataset index | explain: crash line | explain: cause |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "skipped" in r:
            lines.append(f"| {r['case']} | | skipped: {r['skipped']} | | | | | | |")
            continue
        lines.append(
            f"| {r['case']} | {r['source']} | {r['cause']} | {mark(r['crash_ok'])} | {mark(r['origin_ok'])} | "
            f"{', '.join(r['misleading']) or '0'} | {mark(r['index_ok'])} | {mark(r['explain_crash_ok'])} | {r['explain_cause']} |"
        )
    lines += ["", "Totals: " + totals_text(totals), ""]
    return "\n".join(lines)


def score_all(binary, python, only=(), jobs=1):
    selected = [c for c in cases.load() if not only or c.name in only]
    with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
        futures = [pool.submit(score_case, binary, python, c) for c in selected]
        rows = []
        for future in futures:
            rows.append(future.result())
            print_row(rows[-1])
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=os.environ.get("ASSERTSCOPE_BIN", os.path.join(ROOT, "target", "debug", "assertscope")))
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--jobs", type=int, default=1, help="cases scored at once")
    parser.add_argument("--json", help="write the rows and the totals to this file")
    parser.add_argument("--markdown", help="write the table and the totals to this file")
    parser.add_argument("cases", nargs="*")
    args = parser.parse_args()
    rows = score_all(os.path.abspath(args.bin), args.python, set(args.cases), args.jobs)
    totals = summary(rows)
    print("\n" + totals_text(totals))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"rows": rows, "summary": totals}, handle, indent=2)
    if args.markdown:
        command = "python bench/origin/score_projects.py " + " ".join(sys.argv[1:])
        with open(args.markdown, "w", encoding="utf-8") as handle:
            handle.write(markdown(rows, totals, command))


if __name__ == "__main__":
    main()
