//! Many processes: `explain` names the rank that failed, not the ranks that waited, in
//! interleaved logs (torchrun, `srun --label`, accelerate), per-rank files (torchrun
//! `--log-dir`, Slurm `%t`), and from the guard reports of a multi-node `run --report-dir`.

use std::path::Path;
use std::process::Command;

fn explain(paths: &[&Path]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_assertscope"))
        .arg("explain")
        .arg("--json")
        .args(paths)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/distributed").join(name)
}

fn waiting_ranks(json: &serde_json::Value) -> Vec<u32> {
    let mut ranks: Vec<u32> = json["secondary"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["cause"] == "distributed-peer-failure")
        .filter_map(|s| s["text"].as_str()?.strip_prefix("rank ")?.split(' ').next()?.parse().ok())
        .collect();
    ranks.sort();
    ranks
}

#[test]
fn real_torchrun_jobs() {
    for (log, rank) in [("torchrun-gloo-2.log", 1), ("torchrun-gloo-4.log", 3)] {
        let json = explain(&[&fixture(log)]);
        let root = &json["diagnoses"][0];
        assert_eq!(
            (root["cause"].as_str(), root["rank"].as_u64()),
            (Some("target-out-of-range"), Some(rank)),
            "{log}"
        );
        assert_eq!(root["location"]["file"], "/srv/train/ddp_labels.py");
        assert_eq!(root["location"]["line"], 32);
        assert!(waiting_ranks(&json).contains(&0), "{log}: {json:#}");
    }
}

#[test]
fn torchrun_log_dir_layout() {
    let json = explain(&[&fixture("torchrun-logdir")]);
    assert_eq!(json["diagnoses"][0]["rank"], 1);
    assert_eq!(waiting_ranks(&json), vec![0]);
}

#[test]
fn rank_three_asserts_while_the_others_time_out() {
    for input in ["slurm-label.log", "slurm-per-task"] {
        let json = explain(&[&fixture(input)]);
        let root = &json["diagnoses"][0];
        assert_eq!(root["cause"], "target-out-of-range", "{input}");
        assert_eq!(root["rank"], 3, "{input}");
        assert_eq!(root["location"]["line"], 244, "{input}");
        assert_eq!(root["values"]["failing_threads"], 3, "{input}");
        assert_eq!(waiting_ranks(&json), vec![0, 1, 2], "{input}");
    }
}

#[test]
fn accelerate_launch() {
    let json = explain(&[&fixture("accelerate.log")]);
    let root = &json["diagnoses"][0];
    assert_eq!(
        (root["cause"].as_str(), root["rank"].as_u64()),
        (Some("embedding-index-out-of-range"), Some(1))
    );
    assert_eq!(waiting_ranks(&json), vec![0]);
}

#[test]
fn guard_reports_of_a_multi_node_job_are_merged() {
    let dir = tempfile::tempdir().unwrap();
    let report = |rank: u32, host: &str, time: f64, cause: &str| {
        serde_json::json!({
            "schema": "assertscope.guard-report/1", "time": time, "host": host, "pid": 4000 + rank,
            "rank": rank, "local_rank": rank % 2, "world_size": 4, "argv": ["train.py"],
            "diagnosis": {
                "cause": cause, "title": "class target out of range", "confidence": "high",
                "op": "cross_entropy", "location": {"file": "train.py", "line": 42, "function": "main", "code": "loss = ce(out, y)"},
                "rank": rank, "evidence": [], "values": {"max": 10, "bound": 10}, "explanation": "", "fix": "", "checklist_step": 2
            }
        })
    };
    // Rank 3 on node b failed first; rank 2 met the same data a second later.
    std::fs::write(
        dir.path().join("guard-nodeb-4003-1.json"),
        report(3, "nodeb", 100.0, "target-out-of-range").to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("guard-nodeb-4002-1.json"),
        report(2, "nodeb", 101.0, "target-out-of-range").to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("output-rank0-nodea-77.log"),
        "[E ProcessGroupNCCL.cpp:475] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600112 milliseconds before timing out.\n",
    )
    .unwrap();
    let json = explain(&[dir.path()]);
    let root = &json["diagnoses"][0];
    assert_eq!((root["rank"].as_u64(), root["location"]["line"].as_u64()), (Some(3), Some(42)));
    let secondary = json["secondary"].as_array().unwrap();
    assert!(secondary
        .iter()
        .any(|s| s["text"].as_str().unwrap().starts_with("rank 2 (nodeb, pid 4002) also failed")));
    assert!(secondary.iter().any(|s| s["cause"] == "distributed-peer-failure"), "{secondary:#?}");
}
