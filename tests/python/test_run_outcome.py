"""A diagnosis is a failure only if the GuardError reached the top of a thread or process
(or ended it): one the program caught and went on past is a note, never the run's error.
Each case runs a real PyTorch program under `assertscope run --report-dir` and looks at the
diagnosis and at the outcome each guard report records; where `explain` reads the same
output, the two agree."""

import json
import subprocess
import sys
import textwrap

import pytest
from conftest import assertscope_binary

pytest.importorskip("torch")

PY = sys.executable
BAD = "F.cross_entropy(torch.zeros(4, 3), torch.tensor([0, 1, 2, 3]))"
HEAD = "import torch, torch.nn.functional as F\n"


def run_job(tmp_path, code, *flags):
    (tmp_path / "job.py").write_text(HEAD + textwrap.dedent(code))
    reports = tmp_path / "reports"
    proc = subprocess.run([assertscope_binary(), "run", "--guard", "sync", "--report-dir", str(reports), *flags,
                           "--", PY, "job.py"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=300)
    outcomes = sorted(json.loads(p.read_text())["outcome"] for p in reports.glob("guard-*.json"))
    return proc, outcomes


def test_a_caught_error_is_not_blamed_for_a_later_real_one(tmp_path):
    code = f"""
        try:
            {BAD}
        except IndexError:
            pass
        open("no-such-data.csv")
        """
    proc, outcomes = run_job(tmp_path, code, "--json")
    assert proc.returncode == 1
    assert outcomes == ["raised"]
    diagnosis = json.loads(proc.stdout)
    assert all(d["cause"] != "target-out-of-range" for d in diagnosis["diagnoses"]), diagnosis
    assert "FileNotFoundError" in json.dumps(diagnosis), diagnosis
    # explain reads the same output and says the same.
    log = tmp_path / "output.log"
    log.write_bytes(proc.stderr)
    explained = subprocess.run([assertscope_binary(), "explain", "--json", str(log)], stdout=subprocess.PIPE,
                               timeout=60)
    def gist(report):
        return [(d["cause"], d["title"], d["location"]["line"], d["location"]["code"]) for d in report["diagnoses"]]

    assert gist(json.loads(explained.stdout)) == gist(diagnosis)


def test_a_job_that_handles_the_error_and_succeeds_gets_no_error_block(tmp_path):
    code = f"""
        try:
            {BAD}
        except IndexError as error:
            print("skipped a bad batch")
        print("done")
        """
    proc, outcomes = run_job(tmp_path, code)
    assert proc.returncode == 0
    assert outcomes == ["raised"]
    assert proc.stdout == b"skipped a bad batch\ndone\n"
    err = proc.stderr.decode()
    assert "error[" not in err and "error:" not in err, err
    assert "caught an assertscope.GuardError and went on" in err, err


def test_workers_that_caught_the_error_are_not_listed_as_failed(tmp_path):
    code = f"""
        import multiprocessing as mp

        def work(i):
            try:
                {BAD}
            except IndexError:
                return "skipped"
            return "ok"

        if __name__ == "__main__":
            with mp.get_context("fork").Pool(2) as pool:
                print(pool.map(work, range(2)), flush=True)
            F.embedding(torch.tensor([7]), torch.zeros(5, 2))
        """
    proc, outcomes = run_job(tmp_path, code, "--json")
    assert outcomes == ["raised", "raised", "uncaught"]
    diagnosis = json.loads(proc.stdout)
    assert diagnosis["diagnoses"][0]["cause"] == "embedding-index-out-of-range", diagnosis
    assert not any("also failed" in s["text"] for s in diagnosis["secondary"]), diagnosis


UNCAUGHT = {
    "at the top": BAD,
    "as the cause of another error": f"""
        try:
            {BAD}
        except IndexError as error:
            raise RuntimeError("training failed") from error
        """,
    "in a thread": f"""
        import threading
        thread = threading.Thread(target=lambda: {BAD})
        thread.start()
        thread.join()
        """,
    "with sys.excepthook replaced": f"""
        import sys
        sys.excepthook = lambda kind, value, tb: print("custom hook:", kind.__name__, file=sys.stderr)
        {BAD}
        """,
    "in a multiprocessing process": f"""
        import multiprocessing as mp, sys
        def work():
            {BAD}
        if __name__ == "__main__":
            p = mp.get_context("spawn").Process(target=work)
            p.start()
            p.join()
            sys.exit(p.exitcode)
        """,
    "in a pool worker, raised again in the parent": f"""
        import multiprocessing as mp
        def work(i):
            {BAD}
        if __name__ == "__main__":
            with mp.get_context("fork").Pool(1) as pool:
                pool.map(work, [0])
        """,
    "in a DataLoader worker": """
        from torch.utils.data import DataLoader, Dataset
        class Bad(Dataset):
            def __len__(self):
                return 2
            def __getitem__(self, i):
                return F.cross_entropy(torch.zeros(4, 3), torch.tensor([0, 1, 2, 3]))
        if __name__ == "__main__":
            for batch in DataLoader(Bad(), num_workers=1):
                pass
        """,
    "in a torch.multiprocessing.spawn rank": f"""
        import torch.multiprocessing as tmp
        def rank(i):
            {BAD}
        if __name__ == "__main__":
            tmp.spawn(rank, nprocs=1)
        """,
}


@pytest.mark.parametrize("case", list(UNCAUGHT))
def test_an_error_that_reached_the_top_is_the_failure(tmp_path, case):
    proc, outcomes = run_job(tmp_path, UNCAUGHT[case], "--json")
    assert "uncaught" in outcomes, (outcomes, proc.stderr.decode()[-3000:])
    diagnosis = json.loads(proc.stdout)
    assert diagnosis["diagnoses"][0]["cause"] == "target-out-of-range", diagnosis
