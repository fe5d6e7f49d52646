//! Ray: `explain` names the failing rank and its node from a Ray Train driver's output
//! (worker prefixes, `[Rank N Error Snippet]`, repeated-log markers) and from a Ray
//! session's logs directory, for the newest Ray and the one of a year before.

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ray").join(name)
}

fn explain(path: &Path) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_assertscope"))
        .args(["explain", "--json"])
        .arg(path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Rank 1 met the bad label at the cross_entropy call, in a worker on 127.0.0.1.
fn assert_rank_one(json: &serde_json::Value, what: &str) {
    let root = &json["diagnoses"][0];
    assert_eq!(root["cause"], "target-out-of-range", "{what}: {json:#}");
    assert_eq!(root["rank"], 1, "{what}: {json:#}");
    assert_eq!(root["location"]["file"], "/srv/train/ray_labels.py", "{what}");
    assert_eq!(root["location"]["line"], 56, "{what}");
    let node: Vec<&str> = root["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "node")
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert_eq!(node.len(), 1, "{what}: {node:?}");
    // The driver's output names the actor in its prefixes; a worker's own file does not.
    assert!(
        node[0].starts_with("rank 1 ran on node 127.0.0.1 (RayTrainWorker pid ")
            || (what.starts_with("session") && node[0].starts_with("rank 1 ran on node 127.0.0.1 (pid ")),
        "{what}: {node:?}"
    );
    // Ray Train's own summary of the failure is not reported as a rank that waited.
    assert!(
        json["secondary"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| !s["text"].as_str().unwrap().contains("WorkerGroupError")),
        "{what}: {json:#}"
    );
}

#[test]
fn the_driver_output_of_ray_2_60_and_2_52() {
    for log in ["train-2.60-driver.log", "train-2.52-driver.log"] {
        assert_rank_one(&explain(&fixture(log)), log);
    }
}

#[test]
fn a_session_logs_directory() {
    assert_rank_one(&explain(&fixture("session-2.60")), "session-2.60");
}

#[test]
fn the_driver_output_without_colours_or_with_the_logs_deduplicated_alike() {
    // Ray prints colours on a pipe too; a log saved with RAY_COLOR_PREFIX=0 has none.
    let text = std::fs::read_to_string(fixture("train-2.60-driver.log")).unwrap();
    let plain: String = strip_ansi(&text);
    let dir = std::env::temp_dir().join(format!("explain-ray-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("driver.log");
    std::fs::write(&path, plain).unwrap();
    let json = explain(&path);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_rank_one(&json, "without colours");
}

fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
