//! Logs that hold assertscope's own GuardError (tests/fixtures/guard, written by the real
//! guard: see its regenerate.py): the guard already named the cause, the op and the user's
//! line before any kernel ran, so explain reports exactly that, located at the user's line
//! and not inside the injected package.

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
    // Under `run` the GuardError is its headline alone: the cause and op come from it, the
    // user's line from the traceback above it.
    let root =
        check("run-redirected.log", "target-out-of-range", "cross_entropy", "/home/user/proj/train.py", 9);
    assert_eq!(root["location"]["code"], "loss = F.cross_entropy(logits, y)");
    assert_eq!(root["location"]["function"], "main");
}

#[test]
fn a_notebook_cell_under_the_guard() {
    let root = check("notebook-cell.log", "embedding-index-out-of-range", "embedding", "Cell In[5]", 1);
    assert_eq!(root["location"]["code"], "out = emb(ids)");
    // The values the report states: the count, the bound, the bad id and where it sits.
    let values = &root["values"];
    assert_eq!((values["bad_count"].as_u64(), values["bound"].as_u64()), (Some(1), Some(10)), "{values}");
    assert_eq!(values["bad_values"], serde_json::json!([12]), "{values}");
    assert_eq!(values["positions"], serde_json::json!([[0, 2]]), "{values}");
    assert!(
        root["fix"].as_str().unwrap().starts_with("Token id 12 is at or past the end"),
        "{}",
        root["fix"]
    );
}

#[test]
fn a_torchrun_rank_file() {
    let root =
        check("torchrun-rank1.log", "target-out-of-range", "cross_entropy", "/home/user/proj/train.py", 9);
    assert_eq!(root["rank"], 1);
}
