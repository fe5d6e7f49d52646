#!/usr/bin/env python3
"""Scores two assertscope binaries on the programs of bench/origin/corpus (written for the
origin work, in styles unlike the fixtures): does the diagnosis name the labelled origin line,
and how many of its "made here" spans land on a line that only moves a value?

    python3 bench/origin/corpus.py --before OLD_BIN --after NEW_BIN [--python PY] [--mode explain|run|both]

explain: each program runs once on the CPU without assertscope and its traceback is explained,
in the corpus directory, so the sources are on disk. run: each program runs under
`assertscope run --json`. A made span is a step of role `made` (or, from binaries before the
proved origin, `data`: "the offending values were made here"); it is wrong when its line's
statement only assigns, unpacks, reads, moves, casts or reshapes existing values.
"""
import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
MOVES = {"to", "cuda", "cpu", "long", "int", "float", "double", "half", "type", "astype", "view", "reshape", "squeeze",
         "unsqueeze", "flatten", "permute", "transpose", "t", "contiguous", "clone", "detach", "numpy", "tolist", "item"}
WRAPS = {"tensor", "as_tensor", "from_numpy", "array", "asarray", "list", "tuple", "LongTensor"}


def labels():
    with open(os.path.join(CORPUS, "labels.tsv"), encoding="utf-8") as handle:
        rows = [l.rstrip("\n").split("\t") for l in handle if not l.startswith("#")]
    return [dict(zip(rows[0], r)) for r in rows[1:]]


def argv_of(script, python):
    return [python, "-m", script] if not script.endswith(".py") else [python, script]


def moves(node):
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Attribute):
        return moves(node.value)
    if isinstance(node, (ast.Tuple, ast.List)):
        return bool(node.elts) and all(moves(e) for e in node.elts)
    if isinstance(node, ast.Subscript):
        return moves(node.value) and (isinstance(node.slice, (ast.Name, ast.Constant, ast.Slice)) or moves(node.slice))
    if isinstance(node, ast.Call):
        args = all(moves(a) for a in node.args) and all(moves(k.value) for k in node.keywords)
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in MOVES:
            return moves(f.value) and args
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        return name in WRAPS and args
    return False


def only_moves(path, line):
    """Whether the statement at `line` only moves values (the made-here span is wrong)."""
    try:
        tree = ast.parse(open(path, encoding="utf-8").read())
    except (OSError, SyntaxError):
        return False
    found = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if found is None or node.lineno >= found.lineno:
                found = node
    if isinstance(found, ast.Assign):
        return moves(found.value)
    if isinstance(found, ast.For):
        return moves(found.iter)
    if isinstance(found, ast.Return):
        return found.value is None or moves(found.value)
    return False


def diagnosis(binary, case, python, mode):
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHONWARNINGS": "ignore"}
    argv = argv_of(case["script"], python)
    if mode == "run":
        done = subprocess.run([binary, "run", "--json", "--", *argv], cwd=CORPUS, capture_output=True, text=True, timeout=600, env=env)
        out = done.stdout
    else:
        crashed = subprocess.run(argv, cwd=CORPUS, capture_output=True, text=True, timeout=600, env=env)
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as log:
            log.write(crashed.stderr)
        done = subprocess.run([binary, "explain", "--json", log.name], cwd=CORPUS, capture_output=True, text=True, timeout=600)
        os.unlink(log.name)
        out = done.stdout
    try:
        return (json.loads(out).get("diagnoses") or [{}])[0]
    except json.JSONDecodeError:
        return {}


def same(location, want):
    file, line = want.rsplit(":", 1)
    got = os.path.normpath(os.path.join(CORPUS, location.get("file") or ""))
    return got == os.path.normpath(os.path.join(CORPUS, file)) and location.get("line") == int(line)


def score(binary, python, mode):
    rows = []
    for case in labels():
        d = diagnosis(binary, case, python, mode)
        spans = [o for o in d.get("origin") or []]
        named = same(d.get("location") or {}, case["origin"]) or any(same(o, case["origin"]) for o in spans)
        made = [o for o in spans if o.get("role") in ("made", "data") and o.get("chain") in (None, "value", "size")]
        wrong = [o for o in made if only_moves(os.path.join(CORPUS, o["file"]), o["line"])]
        rows.append({"script": case["script"], "cause": d.get("cause"), "named": named,
                     "lines": [o.get("line") for o in spans], "wrong_made": len(wrong)})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--mode", choices=["explain", "run", "both"], default="both")
    args = parser.parse_args()
    modes = ["explain", "run"] if args.mode == "both" else [args.mode]
    for mode in modes:
        for name, binary in (("before", args.before), ("after", args.after)):
            rows = score(os.path.abspath(binary), args.python, mode)
            for r in rows:
                print(f"{mode:7} {name:6} {r['script']:22} {str(r['cause']):30} {'ok  ' if r['named'] else 'MISS'} "
                      f"spans={r['lines']} wrong_made={r['wrong_made']}", flush=True)
            named = sum(r["named"] for r in rows)
            wrong = sum(r["wrong_made"] for r in rows)
            print(f"{mode} {name}: origin named {named}/{len(rows)}, made spans on a move line: {wrong}\n", flush=True)


if __name__ == "__main__":
    main()
