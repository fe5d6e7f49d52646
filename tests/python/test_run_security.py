"""`assertscope run` on a shared machine: another local user must never get code run as
the victim, or a file of the victim's written, through the private directory of the
injected package or through a shared `--report-dir`. The attacker runs as another user
(needs root to switch users; CI runs as root)."""

import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from conftest import assertscope_binary

ATTACKER_UID = 65534  # nobody
STARTS = 300

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="switching to an attacker user needs root")

ATTACKER = textwrap.dedent('''
    import os, sys
    base, wins, stop = sys.argv[1], sys.argv[2], sys.argv[3]
    planted = "import os\\nopen(%r, 'a').write('code ran as %%d\\\\n' %% os.getuid())\\n" % (wins,)
    seen = set()
    while not os.path.exists(stop):
        try:
            names = os.listdir(base)
        except OSError:
            continue
        for name in names:
            if not name.startswith("assertscope-"):
                continue
            d = os.path.join(base, name)
            for target, how in ((os.path.join(d, "sitecustomize.py"), "file"),
                                (os.path.join(d, "assertscope", "__init__.py"), "file"),
                                (os.path.join(d, "planted-link"), "link")):
                try:
                    if how == "file":
                        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o777)
                        os.write(fd, planted.encode())
                        os.close(fd)
                    else:
                        os.symlink("/etc/passwd", target)
                    with open(wins, "a") as f:
                        f.write("wrote %s\\n" % target)
                except OSError:
                    pass
            seen.add(name)
    with open(wins + ".seen", "w") as f:
        f.write("%d\\n" % len(seen))
    ''')


def as_attacker(args):
    # Another user who shares the victim's group (gid 0), the worst case on a cluster
    # where users share a project group and a umask of 002.
    return ["setpriv", f"--reuid={ATTACKER_UID}", "--regid=0", "--clear-groups", *args]


@needs_root
def test_an_attacker_watching_the_temporary_directory_never_gets_in():
    base = tempfile.mkdtemp(prefix="shared-tmp-")
    os.chmod(base, 0o1777)  # as /tmp and /dev/shm
    wins = os.path.join(base, "wins")
    stop = os.path.join(base, "stop")
    script = os.path.join(base, "attacker.py")
    Path(script).write_text(ATTACKER)
    os.chmod(script, 0o644)
    attacker = subprocess.Popen(as_attacker([sys.executable, script, base, wins, stop]))
    try:
        env = {**os.environ, "ASSERTSCOPE_TMPDIR": base}
        for _ in range(STARTS):
            # umask 000: the most a careless victim can give away.
            subprocess.run([assertscope_binary(), "run", "--", sys.executable, "-c", "pass"], env=env, check=True,
                           stdout=subprocess.DEVNULL, preexec_fn=lambda: os.umask(0), timeout=120)
    finally:
        Path(stop).touch()
        attacker.wait(timeout=60)
    seen = int(Path(wins + ".seen").read_text())
    won = Path(wins).read_text() if os.path.exists(wins) else ""
    assert won == "", f"the attacker got in:\n{won}"
    # The attacker did watch: it saw the private directories come and go.
    assert seen > 0
    assert not [n for n in os.listdir(base) if n.startswith("assertscope-")], "run left directories behind"


@needs_root
def test_a_temporary_directory_others_can_swap_is_refused():
    base = tempfile.mkdtemp(prefix="open-tmp-")
    os.chmod(base, 0o777)  # writable by all, no sticky bit: our directory could be renamed away
    proc = subprocess.run([assertscope_binary(), "run", "--", "true"], env={**os.environ, "ASSERTSCOPE_TMPDIR": base},
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and base in lines[0] and "sticky" in lines[0], lines


def sanitized_host():
    host = socket.gethostname()
    return host if host and all(c.isalnum() or c == "-" for c in host) else None


def test_symlinks_planted_in_a_shared_report_dir_are_never_followed(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    victim_file = tmp_path / "victims-precious-file"
    victim_file.write_text("precious\n")
    (shared / "python-processes").symlink_to(victim_file)
    host = sanitized_host()
    # `exec` keeps the shell's pid, so the attacker's guess of run's output file name is right.
    plant_output = f'ln -s {victim_file} {shared}/output-{host}-$$.log; ' if host else ""
    cmd = (f'{plant_output}exec "$0" run --report-dir {shared} -- "$1" -c "print(123)"')
    proc = subprocess.run(["sh", "-c", cmd, assertscope_binary(), sys.executable], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"123\n"
    assert victim_file.read_text() == "precious\n"
    kept = [p for p in shared.iterdir() if p.name.startswith("output-") and not p.is_symlink()]
    assert len(kept) == 1 and kept[0].read_bytes() == b"123\n"


def test_a_guard_report_never_follows_a_planted_temporary_name(tmp_path):
    # The guard writes its report under a fresh random name and renames it into place;
    # a symlink planted where the report goes is replaced, not written through.
    pytest.importorskip("torch")
    shared = tmp_path / "shared"
    shared.mkdir()
    victim_file = tmp_path / "victims-precious-file"
    victim_file.write_text("precious\n")
    code = textwrap.dedent(f"""
        import os, socket, torch, torch.nn.functional as F
        host = "".join(c if c.isalnum() or c in "-_." else "_" for c in socket.gethostname())
        run = os.environ["ASSERTSCOPE_RUN_ID"]
        for n in (1, 2):
            name = f"guard-{{run}}-{{host}}-{{os.getpid()}}-{{n}}.json"
            os.symlink({str(victim_file)!r}, os.path.join({str(shared)!r}, name))
            os.symlink({str(victim_file)!r}, os.path.join({str(shared)!r}, "." + name + ".tmp"))
        F.cross_entropy(torch.zeros(2, 3), torch.tensor([0, 5]))
        """)
    proc = subprocess.run([assertscope_binary(), "run", "--json", "--guard", "sync", "--report-dir", str(shared), "--",
                           sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    assert proc.returncode == 1, proc.stderr.decode()[-2000:]
    assert victim_file.read_text() == "precious\n"
    import json
    assert json.loads(proc.stdout)["diagnoses"][0]["cause"] == "target-out-of-range"
