//! Shared helpers for the integration tests that run Python (the `check` and `scan` tests,
//! render parity, knowledge-base provenance). For `check` and `scan`, data files are written by
//! the real libraries (numpy, pyarrow, safetensors, Pillow) in a Python that has them,
//! and the real binary is run on them.
#![allow(dead_code)]

pub mod parquet_bytes;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Python with numpy/pyarrow/safetensors/Pillow/torch: `ASSERTSCOPE_TEST_PYTHON`, else
/// the repository's `.venv` that scripts/test sets up, else `python3` from PATH.
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("ASSERTSCOPE_TEST_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    if venv.exists() {
        venv
    } else {
        PathBuf::from("python3")
    }
}

/// The libraries the tests write their data files with.
pub const DATA_LIBRARIES: &[&str] = &["numpy", "pyarrow", "safetensors", "PIL"];

/// Whether that Python can import every module named, so the test can run. When it cannot,
/// the test is skipped with the reason on stderr under a plain `cargo test`, and fails
/// under scripts/test (which sets `ASSERTSCOPE_REQUIRE_PYTHON=1` after installing
/// tests/requirements.txt): a test that passes without running proves nothing.
pub fn has_modules(modules: &[&str]) -> bool {
    let code = modules.iter().map(|m| format!("import {m}")).collect::<Vec<_>>().join("; ");
    let ok =
        Command::new(python()).arg("-c").arg(&code).output().map(|o| o.status.success()).unwrap_or(false);
    if !ok {
        let reason = format!(
            "{} cannot import {}: run scripts/test (it installs tests/requirements.txt) or set ASSERTSCOPE_TEST_PYTHON",
            python().display(),
            modules.join(", ")
        );
        skip(&reason);
    }
    ok
}

/// Says why a test that needs the test Python's packages does not run: on stderr under a
/// plain `cargo test`, and as a failure under scripts/test (`ASSERTSCOPE_REQUIRE_PYTHON=1`).
pub fn skip(reason: &str) {
    assert!(std::env::var_os("ASSERTSCOPE_REQUIRE_PYTHON").is_none_or(|v| v != "1"), "{reason}");
    eprintln!("skipped: {reason}");
}

/// Runs a Python script in `dir` (the data files it writes land there).
pub fn py(dir: &Path, script: &str) {
    let out = Command::new(python()).arg("-c").arg(script).current_dir(dir).output().expect("running python");
    assert!(out.status.success(), "python failed:\n{}\n{}", script, String::from_utf8_lossy(&out.stderr));
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", self.stdout, self.stderr))
    }

    /// The cause ids of the diagnoses, in order.
    pub fn causes(&self) -> Vec<String> {
        self.json()["diagnoses"]
            .as_array()
            .expect("diagnoses")
            .iter()
            .map(|d| d["cause"].as_str().expect("cause").to_string())
            .collect()
    }

    pub fn diagnosis(&self, cause: &str) -> Value {
        self.json()["diagnoses"]
            .as_array()
            .expect("diagnoses")
            .iter()
            .find(|d| d["cause"] == cause)
            .unwrap_or_else(|| panic!("no {cause} diagnosis in {}", self.stdout))
            .clone()
    }

    pub fn secondary(&self) -> Vec<(String, String)> {
        self.json()["secondary"]
            .as_array()
            .expect("secondary")
            .iter()
            .map(|s| (s["cause"].as_str().unwrap().to_string(), s["text"].as_str().unwrap().to_string()))
            .collect()
    }
}

/// Runs `assertscope ARGS` in `dir`.
pub fn assertscope(dir: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_assertscope"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("running assertscope");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `assertscope ARGS` in `dir` with its address space limited to `address_space`
/// bytes (`ulimit -v`), killed after `timeout`: `None` when it ran out of time.
pub fn assertscope_bounded(
    dir: &Path,
    args: &[&str],
    address_space: Option<u64>,
    timeout: std::time::Duration,
) -> Option<Run> {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_assertscope"));
    cmd.args(args).current_dir(dir).env("NO_COLOR", "1");
    cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    if let Some(limit) = address_space {
        // SAFETY: setrlimit is async-signal-safe; the closure allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                let rlim = libc::rlimit { rlim_cur: limit, rlim_max: limit };
                if libc::setrlimit(libc::RLIMIT_AS, &rlim) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
    }
    let mut child = cmd.spawn().expect("running assertscope");
    let mut pipes = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out = std::thread::spawn(move || {
        let (mut o, mut e) = (Vec::new(), Vec::new());
        let _ = pipes.0.read_to_end(&mut o);
        let _ = pipes.1.read_to_end(&mut e);
        (o, e)
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting") {
            break Some(status);
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let (stdout, stderr) = out.join().unwrap();
    let status = status?;
    use std::os::unix::process::ExitStatusExt;
    Some(Run {
        code: status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    })
}

/// Asserts a bad-input outcome: exit 2 and one line on stderr naming `file`, no panic.
pub fn assert_one_line_error(run: &Run, file: &str, what: &str) {
    let err = run.stderr.trim_end();
    assert_eq!(run.code, 2, "{what}: exit status {}\nstderr:\n{err}", run.code);
    assert_eq!(err.lines().count(), 1, "{what}: one line expected:\n{err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
    assert!(err.contains(file), "{what}: the error does not name {file}: {err}");
}

/// `assertscope check ARGS --json`, asserting the exit status.
pub fn check_json(dir: &Path, args: &[&str], code: i32) -> Run {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    all.push("--json");
    let run = assertscope(dir, &all);
    assert_eq!(
        run.code, code,
        "exit status of check {args:?}\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    run
}

/// A bad-input run: exit 2, one line on stderr, no panic, naming what is expected.
pub fn check_fails(dir: &Path, args: &[&str], expect: &[&str]) -> String {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    let run = assertscope(dir, &all);
    assert_eq!(
        run.code, 2,
        "exit status of check {args:?}\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let err = run.stderr.trim_end();
    assert_eq!(err.lines().count(), 1, "one line expected:\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    for e in expect {
        assert!(err.contains(e), "{e:?} missing from: {err}");
    }
    err.to_string()
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}
