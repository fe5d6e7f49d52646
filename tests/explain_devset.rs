//! `assertscope explain` on the development set of logs (tests/fixtures/devset): real CPU
//! runs and GPU-format logs built from the exact assertion texts, each with its expected
//! root cause, op and user frame in index.tsv.

use std::path::Path;
use std::process::Command;

struct Expected {
    id: String,
    cause: String,
    op: String,
    user_frame: String,
}

fn index() -> Vec<Expected> {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/devset/index.tsv"),
    )
    .unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            Expected {
                id: cols[0].into(),
                cause: cols[1].into(),
                op: cols[2].into(),
                user_frame: cols[3].into(),
            }
        })
        .collect()
}

fn explain_json(log: &str) -> (serde_json::Value, i32) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/devset").join(format!("{log}.log"));
    let out = Command::new(env!("CARGO_BIN_EXE_assertscope"))
        .args(["explain", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    let json = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{log}: not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (json, out.status.code().unwrap())
}

#[test]
fn every_log_gets_its_cause_op_and_user_frame() {
    let mut wrong = Vec::new();
    for e in index() {
        let (json, code) = explain_json(&e.id);
        assert_eq!(json["schema"], "assertscope.diagnosis/1");
        let root = &json["diagnoses"][0];
        let cause = root["cause"].as_str().unwrap_or("none");
        let op = root["op"].as_str().unwrap_or("-");
        let frame = match &root["location"] {
            serde_json::Value::Null => "-".to_string(),
            l => format!("{}:{}", l["file"].as_str().unwrap(), l["line"]),
        };
        if cause != e.cause || op != e.op || frame != e.user_frame {
            wrong.push(format!(
                "{}: got {cause} / {op} / {frame}, want {} / {} / {}",
                e.id, e.cause, e.op, e.user_frame
            ));
        }
        let want_code = if e.cause == "none" { 1 } else { 0 };
        assert_eq!(code, want_code, "{}: exit status", e.id);
    }
    assert!(
        wrong.is_empty(),
        "{} of the development logs are misdiagnosed:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn distributed_logs_name_the_rank_that_failed() {
    // From index.tsv's notes: the rank whose error is the root, not torchrun's
    // "first observed failure".
    for (log, rank, waiting) in
        [("010", 0, vec![1]), ("020", 1, vec![0]), ("036", 3, vec![0, 1, 2]), ("037", 3, vec![0, 1, 2])]
    {
        let (json, _) = explain_json(log);
        assert_eq!(json["diagnoses"][0]["rank"], rank, "{log}");
        let secondary = json["secondary"].as_array().unwrap();
        for w in waiting {
            let named = secondary.iter().any(|s| {
                s["cause"] == "distributed-peer-failure"
                    && s["text"].as_str().unwrap().starts_with(&format!("rank {w} "))
            });
            assert!(named, "{log}: rank {w} is not listed as waiting: {secondary:#?}");
        }
    }
}

#[test]
fn follow_on_errors_are_secondary() {
    for log in ["025", "043", "037"] {
        let (json, _) = explain_json(log);
        let secondary = json["secondary"].as_array().unwrap();
        assert!(secondary.iter().any(|s| s["cause"] == "cascade"), "{log}: {secondary:#?}");
    }
    // The NaN that made the probabilities invalid is named as the upstream reason.
    let (json, _) = explain_json("032");
    assert!(json["secondary"].as_array().unwrap().iter().any(|s| s["cause"] == "nan-inf"));
}

#[test]
fn asynchronous_errors_say_where_they_surfaced() {
    let (json, _) = explain_json("022");
    let root = &json["diagnoses"][0];
    assert!(root["evidence"].as_array().unwrap().iter().any(|e| e["kind"] == "surfaced"));
    assert!(root["explanation"]
        .as_str()
        .unwrap()
        .contains("where the error surfaced, not where it happened"));
    // CUDA_LAUNCH_BLOCKING=1: the traceback is exact, and nothing is said about surfacing.
    let (json, _) = explain_json("029");
    let root = &json["diagnoses"][0];
    assert!(!root["evidence"].as_array().unwrap().iter().any(|e| e["kind"] == "surfaced"));
}

#[test]
fn values_the_log_reveals_are_reported() {
    let (json, _) = explain_json("001");
    assert_eq!(json["diagnoses"][0]["values"]["value"], 10);
    let (json, _) = explain_json("008");
    let v = &json["diagnoses"][0]["values"];
    assert_eq!((v["value"].as_i64(), v["bound"].as_i64(), v["dim"].as_i64()), (Some(64), Some(64), Some(0)));
    let (json, _) = explain_json("022");
    let v = &json["diagnoses"][0]["values"];
    assert_eq!((v["num_classes"].as_i64(), v["failing_threads"].as_i64()), (Some(7), Some(8)));
    let (json, _) = explain_json("013");
    assert_eq!(json["diagnoses"][0]["values"]["metric_value"], "9.036e+27");
}

#[test]
fn look_alikes_are_not_asserts() {
    for (log, cause) in [
        ("051", "out-of-memory"),
        ("053", "out-of-memory"),
        ("054", "no-kernel-image"),
        ("055", "illegal-memory-access"),
    ] {
        let (json, _) = explain_json(log);
        assert_eq!(json["diagnoses"][0]["cause"], cause, "{log}");
    }
    let (json, code) = explain_json("057");
    assert_eq!((json["diagnoses"].as_array().unwrap().len(), code), (0, 1));
}
