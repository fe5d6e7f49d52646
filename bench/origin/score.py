"""Scores assertscope's diagnoses on the labelled buggy scripts of tests/fixtures/origin:
does the report name the crash line, the origin line (the line the user must change), and,
for DataLoader cases, the dataset indices of the offending samples?

    python bench/origin/score.py [--bin PATH] [--python PY] [--json OUT] [SCRIPT...]

Each script runs under `assertscope run --json`; a case counts as "origin named" when the
diagnosis' location or one of its `origin` locations is the labelled origin line, and its
dataset index is right when every index in `values.dataset_indices` satisfies the label's
predicate (and there is at least one). Prints one row per script and the three rates.
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


def diagnose(binary, python, script):
    """The root diagnosis of one script's run (None when there was none)."""
    completed = subprocess.run(
        [binary, "run", "--json", "--", python, script],
        cwd=os.path.join(CASES, "scripts"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    try:
        report = json.loads(completed.stdout)
    except json.JSONDecodeError:
        return None
    diagnoses = report.get("diagnoses") or []
    return diagnoses[0] if diagnoses else None


def lines_in(diagnosis, script):
    """(crash line, set of origin-candidate lines) that the diagnosis names in `script`."""
    def here(location):
        return location and os.path.basename(location.get("file") or "") == script

    location = diagnosis.get("location")
    crash = location.get("line") if here(location) else None
    named = {crash} if crash else set()
    named |= {o.get("line") for o in diagnosis.get("origin") or [] if here(o)}
    return crash, named


def index_right(diagnosis, predicate):
    indices = (diagnosis.get("values") or {}).get("dataset_indices") or []
    return bool(indices) and all(eval(predicate, {}, {"i": i}) for i in indices)  # noqa: S307 - our own labels


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
            "indices": (diagnosis.get("values") or {}).get("dataset_indices"),
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
