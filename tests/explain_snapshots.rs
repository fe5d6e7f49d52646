//! Snapshots of the human rendering of real diagnoses (review changes with `cargo insta`).

use std::process::Command;

fn explain(id: &str) -> String {
    let path = format!("{}/tests/fixtures/devset/{id}.log", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(env!("CARGO_BIN_EXE_assertscope"))
        .args(["explain", "--color", "never", &path])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn cpu_target_out_of_range() {
    insta::assert_snapshot!(explain("001"));
}

#[test]
fn gpu_assert_surfacing_asynchronously() {
    insta::assert_snapshot!(explain("022"));
}

#[test]
fn four_rank_job() {
    insta::assert_snapshot!(explain("036"));
}

#[test]
fn plain_python_error() {
    insta::assert_snapshot!(explain("058"));
}

fn explain_guard_output(name: &str) -> String {
    let path = format!("{}/tests/fixtures/guard/{name}", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(env!("CARGO_BIN_EXE_assertscope"))
        .args(["explain", "--color", "never", &path])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// The guard's own report read back (a notebook session; tests/fixtures/guard/regenerate.py).
#[test]
fn guard_error_in_a_notebook() {
    insta::assert_snapshot!(explain_guard_output("notebook-cell.log"));
}

/// A saved `assertscope run` log: the GuardError's line and the traceback above it.
#[test]
fn guarded_run_log() {
    insta::assert_snapshot!(explain_guard_output("run-redirected.log"));
}
