"""A real Ray cluster on this machine, started the way clusters are (`ray start --head`,
separately from the job), for the tests and the benchmark of Ray jobs.

Every port is chosen free, the node listens on 127.0.0.1 only, and the cluster's session
directory is private to it. `ray start --block` runs in a process group of its own and every
Ray process it starts stays in that group, so `stop()` ends exactly those processes (never
`ray stop`, which would end every Ray cluster of this user on the machine)."""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

# Ray refuses unix socket paths longer than about 107 bytes: the session directory must be short.
_SHORT_TMP = "/tmp"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RayCluster:
    """`ray start --head --num-cpus N` on 127.0.0.1, with the `ray` of `python`'s environment."""

    def __init__(self, python, num_cpus=2, env=None):
        self.python = str(python)
        self.num_cpus = num_cpus
        self.base_env = dict(os.environ if env is None else env)
        # Ray's own switch for a cluster on one machine (as on macOS): every process names
        # itself 127.0.0.1, so no traffic leaves the loopback interface.
        self.base_env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
        self.temp_dir = tempfile.mkdtemp(prefix="rayt-", dir=_SHORT_TMP)
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.proc = None
        self.dashboard = None
        self.log = Path(self.temp_dir) / "ray-start.log"

    def job_env(self, **extra):
        """The environment a job on this cluster runs with: RAY_ADDRESS names the cluster."""
        env = {**self.base_env, "RAY_ADDRESS": self.address, "OMP_NUM_THREADS": "1",
               "RAY_DEDUP_LOGS": "1", "PYTHONUNBUFFERED": "1"}
        env.update(extra)
        return env

    def start(self, timeout=240):
        ports = {flag: free_port() for flag in (
            "--ray-client-server-port", "--dashboard-port", "--dashboard-agent-listen-port",
            "--dashboard-agent-grpc-port", "--metrics-export-port", "--runtime-env-agent-port",
            "--node-manager-port", "--object-manager-port")}
        cmd = [self.python, "-m", "ray.scripts.scripts", "start", "--head", "--block",
               "--node-ip-address", "127.0.0.1", "--port", str(self.port), "--num-cpus", str(self.num_cpus),
               "--temp-dir", self.temp_dir, "--disable-usage-stats", "--dashboard-host", "127.0.0.1",
               "--object-store-memory", str(80 << 20)]
        for flag, port in ports.items():
            cmd += [flag, str(port)]
        self.dashboard = f"http://127.0.0.1:{ports['--dashboard-port']}"
        env = {**self.base_env, "RAY_USAGE_STATS_ENABLED": "0", "OMP_NUM_THREADS": "1"}
        env.pop("RAY_ADDRESS", None)
        self.log_file = open(self.log, "wb")
        self.proc = subprocess.Popen(cmd, stdout=self.log_file, stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ray start exited with {self.proc.returncode}:\n{self.log.read_text()[-4000:]}")
            if b"Ray runtime started" in self.log.read_bytes():
                return self
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"ray start did not start within {timeout} s:\n{self.log.read_text()[-4000:]}")

    def session_logs(self):
        """The cluster's `session_*/logs` directory."""
        sessions = sorted(Path(self.temp_dir).glob("session_2*"))
        return sessions[-1] / "logs" if sessions else None

    def stop(self):
        """Ends every process of the cluster: SIGTERM to its group, SIGKILL to what is left."""
        if self.proc is None:
            return
        pgid = self.proc.pid
        for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                break
            deadline = time.time() + wait
            while time.time() < deadline and _group_alive(pgid):
                time.sleep(0.2)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.log_file.close()
        self.proc = None
        shutil.rmtree(self.temp_dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def _group_alive(pgid):
    """Whether a process of the group is still running (zombies have ended)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return True
    return False
