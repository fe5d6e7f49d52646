"""Ray Train jobs on a real Ray cluster, started on this machine the way clusters are
(`ray start --head`, separately from the job), with the newest Ray (.venv) and the one of a
year before (.venv-ray-older, set up by scripts/ray-older): the guard reaches workers that
`run` did not start, its reports come back to `run`'s report, and `explain` reads Ray's
own output and session logs.

The job (examples/ray_labels.py): TorchTrainer, 2 workers, gloo on the CPU, the label at
index 77 of rank 1's shard out of range."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import assertscope_binary
from ray_cluster import RayCluster

REPO = Path(__file__).resolve().parents[2]
JOB = REPO / "examples" / "ray_labels.py"
OLDER = REPO / ".venv-ray-older" / "bin" / "python"
# The line of the cross_entropy call in the job.
LOSS_LINE = next(i for i, line in enumerate(JOB.read_text().splitlines(), 1) if "cross_entropy" in line)


def ray_version(python):
    proc = subprocess.run([str(python), "-c", "import ray; print(ray.__version__)"], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, timeout=120)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def missing(what):
    """Ray absent: a skip, or a failure where scripts/test installed it (ASSERTSCOPE_REQUIRE_PYTHON=1)."""
    if os.environ.get("ASSERTSCOPE_REQUIRE_PYTHON") == "1":
        pytest.fail(f"{what} is not installed, but scripts/test installs it")
    pytest.skip(f"{what} is not installed")


def start_cluster(python):
    version = ray_version(python)
    if version is None:
        missing(f"Ray for {python}")
    return RayCluster(python).start(), version


@pytest.fixture(scope="module")
def newest():
    cluster, version = start_cluster(sys.executable)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def older():
    if not OLDER.exists():
        missing(f"the older Ray ({OLDER.parent.parent.name}, scripts/ray-older)")
    cluster, version = start_cluster(OLDER)
    try:
        yield cluster
    finally:
        cluster.stop()


def run_job(cluster, tmp_path, *wrap, bad=True):
    """Runs the job on the cluster (under `wrap`, e.g. `assertscope run --json --`);
    returns the finished process."""
    env = cluster.job_env(EPOCHS="1", BAD_RANK="1" if bad else "-1", STORAGE_PATH=str(tmp_path / "results"))
    cmd = [*wrap, cluster.python, str(JOB)]
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO, timeout=600)


def guarded_report(cluster, tmp_path):
    proc = run_job(cluster, tmp_path, assertscope_binary(), "run", "--json", "--no-pty", "--")
    out = proc.stderr.decode(errors="replace")
    assert proc.stdout, out[-6000:]
    return proc, json.loads(proc.stdout), out


def check_guarded(proc, report, out):
    root = report["diagnoses"][0]
    where = (root["location"] or {})
    assert (root["cause"], root["rank"], where.get("file"), where.get("line")) == (
        "target-out-of-range", 1, "examples/ray_labels.py", LOSS_LINE), out[-6000:]
    # The sample the guard's DataLoader recording traced the bad label to.
    indices = root.get("dataset_indices") or root["values"].get("dataset_indices")
    assert indices == [77], root
    assert any(e["kind"] == "guard" for e in root["evidence"]), root
    # Ray ends the job itself: `run` never stops the driver for a worker's report.
    assert proc.returncode == 1, out[-3000:]


def explain_json(*inputs):
    proc = subprocess.run([assertscope_binary(), "explain", "--json", *map(str, inputs)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)


def check_explained(report, text):
    root = report["diagnoses"][0]
    assert (root["cause"], root["rank"]) == ("target-out-of-range", 1), (report, text[-4000:])
    assert root["location"]["line"] == LOSS_LINE, root


def test_guard_in_the_workers_of_a_separately_started_cluster(newest, tmp_path):
    proc, report, out = guarded_report(newest, tmp_path)
    check_guarded(proc, report, out)
    node = [e["text"] for e in report["diagnoses"][0]["evidence"] if e["kind"] == "node"]
    assert node and node[0].startswith("rank 1 ran on node "), report


def test_explain_reads_the_plain_driver_output_and_the_session_logs(newest, tmp_path):
    proc = run_job(newest, tmp_path)
    assert proc.returncode == 1
    log = tmp_path / "driver.log"
    log.write_bytes(proc.stdout + proc.stderr)
    text = log.read_text(errors="replace")
    assert "[Rank 1 Error Snippet]" in text and "(RayTrainWorker pid=" in text, text[-3000:]
    report = explain_json(log)
    check_explained(report, text)
    node = [e["text"] for e in report["diagnoses"][0]["evidence"] if e["kind"] == "node"]
    assert node == [node[0]] and "rank 1 ran on node 127.0.0.1 (RayTrainWorker pid " in node[0], report
    # The same failure from the cluster's own logs (`session_*/logs`), without the driver's output.
    check_explained(explain_json(newest.session_logs()), text)


def test_a_clean_job_trains_the_same_with_and_without_the_guard(newest, tmp_path):
    plain = run_job(newest, tmp_path / "plain", bad=False)
    guarded = run_job(newest, tmp_path / "guarded", assertscope_binary(), "run", "--no-pty", "--", bad=False)
    metrics = []
    for proc in (plain, guarded):
        out = (proc.stdout + proc.stderr).decode(errors="replace")
        assert proc.returncode == 0, out[-4000:]
        metrics.append([line for line in out.splitlines() if line.startswith("final metrics:")])
    assert metrics[0] and metrics[0] == metrics[1], metrics


def test_ray_job_submit_with_the_runtime_env_of_assertscope_ray(newest, tmp_path):
    """A job submitted with `ray job submit`, which `run` does not start: the documented
    one-liner gives its workers the guard and a report directory."""
    reports = tmp_path / "reports"
    reports.mkdir()
    env = newest.job_env(EPOCHS="1", BAD_RANK="1", STORAGE_PATH=str(tmp_path / "results"),
                         PYTHONPATH=str(REPO / "python"))
    # The submitted driver runs with the cluster's environment: STORAGE_PATH goes in the runtime_env.
    base = json.dumps({"env_vars": {"STORAGE_PATH": env["STORAGE_PATH"]}})
    runtime_env = subprocess.run([sys.executable, "-m", "assertscope.ray", "--report-dir", str(reports), "--base", base],
                                 stdout=subprocess.PIPE, env=env, check=True, timeout=60).stdout.decode()
    assert json.loads(runtime_env)["worker_process_setup_hook"] == "assertscope.ray.setup_worker"
    ray = Path(sys.executable).with_name("ray")
    env.pop("PYTHONPATH")
    proc = subprocess.run([str(ray), "job", "submit", "--address", newest.dashboard, "--runtime-env-json", runtime_env,
                           "--", sys.executable, str(JOB)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                          cwd=REPO, timeout=600)
    out = proc.stdout.decode(errors="replace")
    assert proc.returncode != 0, out[-3000:]
    assert any(p.name.startswith("guard-") for p in reports.iterdir()), out[-4000:]
    report = explain_json(reports)
    root = report["diagnoses"][0]
    assert (root["cause"], root["rank"]) == ("target-out-of-range", 1), report
    assert (root.get("dataset_indices") or root["values"].get("dataset_indices")) == [77], root


def test_the_older_ray(older, tmp_path):
    assert ray_version(OLDER) != ray_version(sys.executable)
    proc, report, out = guarded_report(older, tmp_path / "guarded")
    check_guarded(proc, report, out)
    plain = run_job(older, tmp_path / "plain")
    log = tmp_path / "driver.log"
    log.write_bytes(plain.stdout + plain.stderr)
    check_explained(explain_json(log), log.read_text(errors="replace"))
