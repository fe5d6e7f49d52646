"""Scores assertscope's diagnoses on the labelled buggy scripts of tests/fixtures/origin:
does the report name the crash line, the origin line (the line the user must change), and,
for DataLoader cases, the dataset indices of the offending samples?

    python bench/origin/score.py [--bin PATH] [--python PY] [--json OUT] [SCRIPT...]

Each script runs under `assertscope run --json`; a case counts as "origin named" when the
diagnosis' location or one of its `origin` locations is the labelled origin line, and its
dataset index is right when every index in `values.dataset_indices` (or a top-level
`dataset_indices`) satisfies the label's predicate (and there is at least one). Prints one row
per script and the three rates. bench/origin/score_projects.py scores the labelled projects of
tests/fixtures/origin_projects with the same functions.
"""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CASES = os.path.join(ROOT, "tests", "fixtures", "origin")


def load_labels():
    labels = []
    with open(os.path.join(CASES, "labels.tsv"), encoding="utf-8") as handle:
        rows = [line.rstrip("\n").split("\t") for line in handle if not line.startswith("#")]
    header, body = rows[0], rows[1:]
    for row in body:
        case = dict(zip(header, row))
        labels.append(
            {"script": case["script"], "crash": int(case["crash"]), "origin": int(case["origin"]), "bad_index": case["bad_index"]}
        )
    return labels


# Roles by which an origin entry claims "the bad value was made here": `data` in the current
# JSON shape, `made` in the step-by-step shape (where `move`, `unpack`, `read`, `store` and
# `sized` are steps on the way, not claims). A `module` entry (the layer the value broke, where
# it was created) and a `call` entry claim no origin of the value.
CLAIM_ROLES = {"data", "made"}


def run_json(argv, cwd, env=None, timeout=600):
    """The JSON report that `argv` (an assertscope command with --json) prints, or None."""
    completed = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    try:
        return json.loads(completed.stdout)
    except json.JSONDecodeError:
        return None


def root_diagnosis(report):
    diagnoses = (report or {}).get("diagnoses") or []
    return diagnoses[0] if diagnoses else None


def diagnose(binary, python, script):
    """The root diagnosis of one script's run (None when there was none)."""
    return root_diagnosis(run_json([binary, "run", "--json", "--", python, script], os.path.join(CASES, "scripts")))


def origin_steps(diagnosis):
    """The diagnosis' origin entries as dicts with file, line, code, role and note, in order:
    the current shape (a list of locations with a role and a note) and the step-by-step shape
    (an ordered list of steps, a step's location inline or under "location") alike."""
    steps = []
    for entry in diagnosis.get("origin") or []:
        where = entry.get("location") if isinstance(entry.get("location"), dict) else entry
        steps.append({k: where.get(k) for k in ("file", "line", "code")} | {"role": entry.get("role"), "note": entry.get("note")})
    return steps


def dataset_indices(diagnosis):
    """The dataset indices the diagnosis names: a top-level `dataset_indices`, else the values'."""
    top = diagnosis.get("dataset_indices")
    return top if top is not None else (diagnosis.get("values") or {}).get("dataset_indices") or []


def lines_in(diagnosis, script):
    """(crash line, set of origin-candidate lines) that the diagnosis names in `script`."""
    def here(location):
        return location and os.path.basename(location.get("file") or "") == script

    location = diagnosis.get("location")
    crash = location.get("line") if here(location) else None
    named = {crash} if crash else set()
    named |= {o.get("line") for o in origin_steps(diagnosis) if here(o)}
    return crash, named


def index_right(diagnosis, predicate):
    """Whether the diagnosis names at least one dataset index and every one satisfies
    `predicate` (a callable, or an expression over `i`)."""
    if isinstance(predicate, str):
        expression = predicate
        predicate = lambda i: eval(expression, {}, {"i": i})  # noqa: E731, S307 - our own labels
    indices = dataset_indices(diagnosis)
    return bool(indices) and all(predicate(i) for i in indices)


def score(binary, python, only=()):
    rows = []
    for case in load_labels():
        if only and case["script"] not in only:
            continue
        diagnosis = diagnose(binary, python, case["script"]) or {}
        crash, named = lines_in(diagnosis, case["script"])
        row = {
            "script": case["script"],
            "cause": diagnosis.get("cause"),
            "crash_ok": crash == case["crash"],
            "origin_ok": case["origin"] in named,
            "loader_case": case["bad_index"] != "-",
            "index_ok": index_right(diagnosis, case["bad_index"]) if case["bad_index"] != "-" else None,
            "named": sorted(n for n in named if n),
            "indices": dataset_indices(diagnosis),
        }
        rows.append(row)
        print(
            f"{row['script']:28} {str(row['cause']):30} crash={'ok' if row['crash_ok'] else 'MISS':4} "
            f"origin={'ok' if row['origin_ok'] else 'MISS':4} "
            f"index={'-' if row['index_ok'] is None else ('ok' if row['index_ok'] else 'MISS')} "
            f"named={row['named']} indices={row['indices']}",
            flush=True,
        )
    return rows


def summary(rows):
    loader = [r for r in rows if r["loader_case"]]
    return {
        "cases": len(rows),
        "crash_line": sum(r["crash_ok"] for r in rows) / max(len(rows), 1),
        "origin_line": sum(r["origin_ok"] for r in rows) / max(len(rows), 1),
        "loader_cases": len(loader),
        "dataset_index": sum(bool(r["index_ok"]) for r in loader) / max(len(loader), 1),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=os.environ.get("ASSERTSCOPE_BIN", os.path.join(ROOT, "target", "debug", "assertscope")))
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--json", help="write the rows and the summary to this file")
    parser.add_argument("scripts", nargs="*")
    args = parser.parse_args()
    rows = score(os.path.abspath(args.bin), args.python, set(args.scripts))
    totals = summary(rows)
    print(
        f"\n{totals['cases']} cases: crash line {totals['crash_line']:.0%}, origin line {totals['origin_line']:.0%}, "
        f"dataset index {totals['dataset_index']:.0%} of {totals['loader_cases']} DataLoader cases"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"rows": rows, "summary": totals}, handle, indent=2)


if __name__ == "__main__":
    main()
