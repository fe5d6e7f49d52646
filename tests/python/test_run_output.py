"""The command's output under `assertscope run`: passed on byte for byte to wherever it
goes (a pipe, a new file, a file opened for appending, /dev/null), and diagnosed even when
the job logs faster than the scanner reads, because the end of the output (where the
crash is) is always scanned."""

import json
import subprocess
import sys
import textwrap

import pytest
from conftest import assertscope_binary

# Lines of every length, some without a newline at the end of a write, and a last line
# without one: a copy that cut or reordered anything would show.
PRODUCER = textwrap.dedent("""
    import os, sys
    size = int(sys.argv[1])
    written = 0
    i = 0
    while written < size:
        chunk = b"".join(b"%d:%s\\n" % (i + k, b"x" * ((i + k) * 7919 % 300)) for k in range(200))
        chunk += b"partial %d " % i
        os.write(1, chunk)
        written += len(chunk)
        i += 200
    os.write(1, b"the end, no newline")
    """)


def under_run(*command):
    return [assertscope_binary(), "run", "--guard", "off", "--", *command]


def produce(size):
    return [sys.executable, "-c", PRODUCER, str(size)]


@pytest.mark.parametrize("mode", ["wb", "ab"], ids=["new-file", "appending"])
def test_output_to_a_file_is_the_same_bytes_as_without_run(tmp_path, mode):
    # A file opened for appending (`>> log`) cannot be spliced to; it must be copied instead.
    outputs = []
    for cmd in (produce(24 << 20), under_run(*produce(24 << 20))):
        path = tmp_path / f"out{len(outputs)}"
        path.write_bytes(b"kept from before\n")
        with open(path, mode) as f:
            subprocess.run(cmd, stdout=f, check=True, timeout=300)
        outputs.append(path.read_bytes())
    assert len(outputs[1]) == len(outputs[0])
    assert outputs[1] == outputs[0]


def test_output_to_a_pipe_is_the_same_bytes_as_without_run():
    plain = subprocess.run(produce(24 << 20), stdout=subprocess.PIPE, check=True, timeout=300).stdout
    supervised = subprocess.run(under_run(*produce(24 << 20)), stdout=subprocess.PIPE, check=True,
                                timeout=300).stdout
    assert supervised == plain


def test_output_to_dev_null_ends_with_the_childs_status():
    with open("/dev/null", "wb") as null:
        proc = subprocess.run(under_run(sys.executable, "-c", PRODUCER + "\nsys.exit(7)", str(8 << 20)),
                              stdout=null, timeout=300)
    assert proc.returncode == 7


@pytest.mark.parametrize("destination", ["pipe", "file"])
def test_the_end_of_a_flood_of_output_is_always_diagnosed(tmp_path, destination):
    # The job logs much faster than the scanner reads, then prints a kernel assertion and
    # the error that follows it. However far the scanner fell behind, it must see that end.
    flood = 64 << 20
    code = textwrap.dedent(f"""
        import os, sys
        line = b"[rank0]: epoch 3 step 12345 | loss 0.4821 | lr 3.0e-04 | 812.4 samples/s\\n"
        block = line * ((1 << 20) // len(line))
        for _ in range({flood} // len(block)):
            os.write(1, block)
        os.write(1, b"ops/csrc/voxelize_cuda.cu:58: scatter_points_kernel: block: [62,0,0], "
                    b"thread: [20,0,0] Assertion `voxel_idx < num_voxels` failed.\\n")
        os.write(1, b"RuntimeError: CUDA error: device-side assert triggered\\n")
        sys.exit(1)
        """)
    # With --json the command's output goes to stderr, the diagnosis to stdout.
    cmd = [assertscope_binary(), "run", "--json", "--guard", "off", "--", sys.executable, "-c", code]
    if destination == "file":
        log = tmp_path / "log"
        with open(log, "wb") as f:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=f, timeout=300)
        output = log.read_bytes()
    else:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        output = proc.stderr
    assert proc.returncode == 1
    assert output.endswith(b"\nRuntimeError: CUDA error: device-side assert triggered\n")
    assert len(output) > flood * 0.99
    diagnoses = json.loads(proc.stdout)["diagnoses"]
    assert diagnoses and diagnoses[0]["cause"] == "unknown-device-assert", diagnoses


def test_output_written_a_line_at_a_time_is_scanned_whole():
    # A shell loop writes one short line per write, the way most jobs log, and the
    # scanner must see every line: a few KiB are nowhere near a pipeful. The exception's
    # line number in the scanned output says whether anything was skipped before it.
    script = textwrap.dedent("""
        i=0
        while [ $i -lt 400 ]; do echo "step $i loss 0.5" >&2; i=$((i+1)); done
        echo "IndexError: Target 5 is out of bounds." >&2
        exit 1
        """)
    seen = []
    for _ in range(15):
        proc = subprocess.run([assertscope_binary(), "run", "--json", "--guard", "off", "--", "sh", "-c", script],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        assert proc.returncode == 1 and proc.stderr.count(b"\n") == 401
        diagnoses = json.loads(proc.stdout)["diagnoses"]
        seen.append(diagnoses[0]["evidence"][0].get("source_line") if diagnoses else None)
    assert seen == [401] * 15, seen


def test_a_write_error_on_a_file_reaches_the_child_as_without_run(tmp_path):
    # A file-size limit stands in for a full disk: the child must see the file's own error
    # (EFBIG), not a broken pipe, and end as it would without run.
    import resource

    def limit_file_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    code = "import os\nos.write(1, b'x' * (2 << 20))\nos.write(1, b'more')"
    results = []
    for cmd in ([sys.executable, "-c", code], under_run(sys.executable, "-c", code)):
        out = tmp_path / f"out{len(results)}"
        with open(out, "wb") as f:
            proc = subprocess.run(cmd, stdout=f, stderr=subprocess.PIPE, preexec_fn=limit_file_size, timeout=120)
        results.append((proc.returncode, out.stat().st_size))
        assert b"[Errno 27] File too large" in proc.stderr, proc.stderr
    assert results[1] == results[0]


def pipe_size(fd):
    import fcntl
    return fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)


def test_the_pipe_to_the_reader_is_grown_to_a_whole_chunk_and_never_shrunk():
    # Each wake-up of the reader (`| cat`) then takes a whole chunk of the job's output.
    import fcntl
    import os
    chunk = 1 << 20
    with open("/proc/sys/fs/pipe-max-size") as f:
        if int(f.read()) < chunk:
            pytest.skip("this kernel's pipe-max-size is below 1 MiB")
    for before, after in [(64 << 10, chunk), (2 * chunk, 2 * chunk)]:
        read, write = os.pipe()
        try:
            try:
                fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, before)
            except OSError:
                continue  # a capacity above pipe-max-size needs privileges
            assert pipe_size(write) == before
            proc = subprocess.run(under_run(sys.executable, "-c", "print('hello')"), stdout=write,
                                  stderr=subprocess.DEVNULL, timeout=120)
            assert proc.returncode == 0
            assert pipe_size(read) == after
            assert os.read(read, 100) == b"hello\n"
        finally:
            os.close(read)
            os.close(write)
