//! `assertscope explain` on logs of value errors (tests/fixtures/value-logs): each in a
//! style of its own (a THC one-liner naming its kernel file, a transcription, a message in
//! backticks before a debugger session, a block quote, a traceback cut before its
//! message, loguru, pytest, torchrun, notebooks), each with its expected root cause, op and
//! user frame in index.tsv (`cargo test --test explain_value_logs -- --nocapture` prints
//! the score and the misses).

use std::path::Path;
use std::process::Command;

#[test]
fn value_error_logs_get_their_cause_op_and_user_frame() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/value-logs");
    let index = std::fs::read_to_string(dir.join("index.tsv")).unwrap();
    let (mut total, mut right) = (0, 0);
    for row in index.lines().skip(1) {
        let cols: Vec<&str> = row.split('\t').collect();
        let (id, want_cause, want_op, want_frame) = (cols[0], cols[1], cols[2], cols[3]);
        let out = Command::new(env!("CARGO_BIN_EXE_assertscope"))
            .args(["explain", "--json"])
            .arg(dir.join(format!("{id}.log")))
            .output()
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{id}: not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
        let root = &json["diagnoses"][0];
        let cause = root["cause"].as_str().unwrap_or("none");
        let op = root["op"].as_str().unwrap_or("-");
        let frame = match &root["location"] {
            serde_json::Value::Null => "-".to_string(),
            l => format!("{}:{}", l["file"].as_str().unwrap(), l["line"]),
        };
        total += 1;
        if (cause, op, frame.as_str()) == (want_cause, want_op, want_frame) {
            right += 1;
        } else {
            println!("miss {id}: got {cause} / {op} / {frame}, want {want_cause} / {want_op} / {want_frame}");
        }
    }
    println!("value-error logs: {right}/{total}");
    assert_eq!(right, total, "{} of {total} value-error logs are misdiagnosed", total - right);
}

/// A traceback cut before its message says so, in the report and in the JSON.
#[test]
fn a_cut_traceback_is_stated_with_low_confidence() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/value-logs");
    for id in ["v11", "v12"] {
        let out = Command::new(env!("CARGO_BIN_EXE_assertscope"))
            .args(["explain", "--json"])
            .arg(dir.join(format!("{id}.log")))
            .output()
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let root = &json["diagnoses"][0];
        assert_eq!(root["confidence"], "low", "{id}");
        assert_eq!(root["evidence"][0]["kind"], "innermost-frame", "{id}");
        assert!(root["explanation"].as_str().unwrap().contains("The log stops before the error message"), "{id}");
        let text = Command::new(env!("CARGO_BIN_EXE_assertscope"))
            .arg("explain")
            .arg(dir.join(format!("{id}.log")))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&text.stdout);
        assert!(text.contains("The log stops before the error message"), "{id}: {text}");
    }
}
