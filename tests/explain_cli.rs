//! `assertscope explain` as a user runs it: files, stdin, directories, and bad input.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn assertscope(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_assertscope"))
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.map(<[u8]>::to_vec);
    let writer = std::thread::spawn(move || {
        if let Some(bytes) = input {
            let _ = pipe.write_all(&bytes);
        }
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn devset(id: &str) -> String {
    format!("{}/tests/fixtures/devset/{id}.log", env!("CARGO_MANIFEST_DIR"))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn reads_stdin() {
    let log = std::fs::read(devset("001")).unwrap();
    let out = assertscope(&["explain", "--json"], Some(&log));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["diagnoses"][0]["cause"], "target-out-of-range");
    let dash = assertscope(&["explain", "-", "--json"], Some(&log));
    assert_eq!(dash.stdout, out.stdout);
}

#[test]
fn missing_file_is_a_one_line_error() {
    let out = assertscope(&["explain", "no/such/train.log"], None);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no/such/train.log") && err.contains("No such file"), "{err}");
}

#[test]
fn binary_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.pt");
    std::fs::write(&path, b"PK\x03\x04\x00\x00\x08\x00binary\x00checkpoint").unwrap();
    let out = assertscope(&["explain", path.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("model.pt") && err.contains("a zip archive") && err.contains("not a text log"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
}

#[test]
fn empty_input_has_no_error() {
    let out = assertscope(&["explain"], Some(b""));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("no error found"));
}

#[test]
fn invalid_utf8_is_read_lossily() {
    let mut log = b"caf\xe9 \xff\xfe training\n".to_vec();
    log.extend_from_slice(b"IndexError: Target 7 is out of bounds.\n");
    let out = assertscope(&["explain", "--json"], Some(&log));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["diagnoses"][0]["values"]["value"], 7);
}

#[test]
fn a_single_100_mb_line_is_survived() {
    let mut log = vec![b'='; 100 << 20];
    log.extend_from_slice(b"\nRuntimeError: CUDA error: an illegal memory access was encountered\n");
    let out = assertscope(&["explain", "--json"], Some(&log));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["diagnoses"][0]["cause"], "illegal-memory-access");
    assert_eq!(json["diagnoses"][0]["evidence"][0]["source_line"], 2);
}

#[test]
fn a_directory_of_rank_logs_is_one_job() {
    let dir = tempfile::tempdir().unwrap();
    // torchrun --log-dir layout: <dir>/<run>/attempt_0/<local_rank>/stderr.log
    let base = dir.path().join("run1/attempt_0");
    for r in 0..3 {
        std::fs::create_dir_all(base.join(r.to_string())).unwrap();
    }
    std::fs::write(
        base.join("0/stderr.log"),
        "[E1105 09:41:07 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=10, NumelOut=10, Timeout(ms)=600000) ran for 600068 milliseconds before timing out.\n",
    )
    .unwrap();
    std::fs::write(
        base.join("1/stderr.log"),
        "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1236: indexSelectLargeIndex: block: [5,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\nTraceback (most recent call last):\n  File \"/srv/lm/train.py\", line 88, in <module>\n    loss.backward()\nRuntimeError: CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n",
    )
    .unwrap();
    std::fs::write(base.join("2/stderr.log"), "").unwrap();
    std::fs::write(base.join("core.bin"), b"\x00\x01\x02").unwrap();
    let out = assertscope(&["explain", "--json", dir.path().to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let root = &json["diagnoses"][0];
    assert_eq!(
        (root["cause"].as_str(), root["rank"].as_u64()),
        (Some("embedding-index-out-of-range"), Some(1))
    );
    assert_eq!(root["location"]["line"], 88);
    assert_eq!(json["secondary"][0]["cause"], "distributed-peer-failure");
}

#[test]
fn an_empty_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = assertscope(&["explain", dir.path().to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("holds no log files"));
}

#[test]
fn human_output_shows_the_source_line_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("train.py");
    std::fs::write(&script, "import torch\n\nfor x, y in loader:\n    loss = criterion(model(x), y)\n")
        .unwrap();
    let log = format!(
        "Traceback (most recent call last):\n  File \"{}\", line 4, in <module>\nIndexError: Target 5 is out of bounds.\n",
        script.display()
    );
    let out = assertscope(&["explain"], Some(log.as_bytes()));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("4 |     loss = criterion(model(x), y)"), "{text}");
    assert!(text.contains("error[target-out-of-range]"), "{text}");
}

/// A crash log that a dying node left padded with NUL bytes, as a file of its own and as
/// one rank of a directory.
#[test]
fn a_crash_log_with_nul_padding_is_read() {
    let mut log = std::fs::read(devset("023")).unwrap();
    log.extend(std::iter::repeat_n(0u8, 64 * 1024));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rank0.log");
    std::fs::write(&file, &log).unwrap();
    for target in [&file, &dir.path().to_path_buf()] {
        let out = assertscope(&["explain", "--json", target.to_str().unwrap()], None);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["diagnoses"][0]["cause"], "target-out-of-range");
        assert_eq!(json["diagnoses"][0]["location"]["file"], "main.py");
    }
    // Padding in the middle (the file was preallocated, then written on) is skipped too.
    let mut middle = b"step 1\n".to_vec();
    middle.extend(std::iter::repeat_n(0u8, 4096));
    middle.extend(std::fs::read(devset("023")).unwrap());
    let out = assertscope(&["explain", "--json"], Some(&middle));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn files_skipped_in_a_directory_are_named_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rank0.log"), std::fs::read(devset("023")).unwrap()).unwrap();
    std::fs::write(dir.path().join("model.pt"), b"PK\x03\x04\x00\x00\x08\x00binary\x00checkpoint").unwrap();
    std::fs::write(dir.path().join("metrics.json"), b"{\"loss\": 1.0}").unwrap();
    let out = assertscope(&["explain", dir.path().to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("skipped") && err.contains("model.pt") && err.contains("not a text log"), "{err}");
    assert!(err.contains("metrics.json") && err.contains("JSON"), "{err}");
}
