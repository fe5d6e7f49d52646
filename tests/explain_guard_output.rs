//! Logs that hold assertscope's own GuardError (tests/fixtures/guard): the guard already
//! named the cause, the op and the user's line before any kernel ran, so explain reports
//! exactly that, located at the user's line and not inside the injected package.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn explain(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/guard").join(name);
    let out = Command::new(env!("CARGO_BIN_EXE_assertscope"))
        .args(["explain", "--json"])
        .arg(path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn check(name: &str, cause: &str, op: &str, file: &str, line: u64) -> Value {
    let json = explain(name);
    let root = json["diagnoses"][0].clone();
    assert_eq!(root["cause"], cause, "{name}");
    assert_eq!(root["op"], op, "{name}");
    assert_eq!(root["confidence"], "high", "{name}");
    assert_eq!(root["location"]["file"], file, "{name}");
    assert_eq!(root["location"]["line"], line, "{name}");
    assert_eq!(root["evidence"][0]["kind"], "guard", "{name}");
    root
}

#[test]
fn a_redirected_guarded_run() {
    let root = check("run-redirected.log", "target-out-of-range", "cross_entropy", "train.py", 9);
    assert_eq!(root["location"]["code"], "loss = F.cross_entropy(logits, y)");
    assert!(root["evidence"][0]["text"].as_str().unwrap().contains("3 at [3]"));
}

#[test]
fn a_notebook_cell_under_the_guard() {
    check("notebook-cell.log", "embedding-index-out-of-range", "embedding", "nb.py", 6);
}

#[test]
fn a_torchrun_rank_file() {
    let root = check("torchrun-rank1.log", "target-out-of-range", "cross_entropy", "train.py", 9);
    assert_eq!(root["rank"], 1);
}
