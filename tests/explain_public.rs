//! `assertscope explain` on logs that users posted in public threads
//! (tests/fixtures/public): many projects, PyTorch 0.3 to 2.x, every way of pasting. The
//! share of logs whose root cause and user frame come out right must stay at the bars
//! (`cargo test --test explain_public -- --nocapture` prints the score and the misses).

use std::path::Path;
use std::process::Command;

#[test]
fn public_logs_get_their_cause_and_user_frame() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/public");
    let index = std::fs::read_to_string(dir.join("index.tsv")).unwrap();
    let (mut total, mut causes, mut frames) = (0, 0, 0);
    for row in index.lines().skip(1) {
        let cols: Vec<&str> = row.split('\t').collect();
        let (id, want_cause, want_frame) = (cols[0], cols[1], cols[3]);
        let out = Command::new(env!("CARGO_BIN_EXE_assertscope"))
            .args(["explain", "--json"])
            .arg(dir.join(format!("{id}.log")))
            .output()
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{id}: not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
        let root = &json["diagnoses"][0];
        let cause = root["cause"].as_str().unwrap_or("none");
        let frame = match &root["location"] {
            serde_json::Value::Null => "-".to_string(),
            l => format!("{}:{}", l["file"].as_str().unwrap(), l["line"]),
        };
        total += 1;
        causes += (cause == want_cause) as usize;
        frames += (frame == want_frame) as usize;
        if cause != want_cause || frame != want_frame {
            println!("miss {id}: got {cause} {frame}, want {want_cause} {want_frame}");
        }
    }
    println!("public logs: cause {causes}/{total}, frame {frames}/{total}");
    assert!(total >= 40, "the public set holds only {total} logs");
    // The bars are what the set reaches: every cause and every frame.
    assert_eq!(causes, total, "cause right on {causes} of {total}");
    assert_eq!(frames, total, "frame right on {frames} of {total}");
}
