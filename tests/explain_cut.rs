//! Logs whose text stops before the error message: every labelled log (development and
//! public sets) whose root cause is a bad value, cut just before the exception line of its
//! last traceback, so that only the frames (and whatever came before) are left. The
//! innermost frames still say which op was called; the cause must come out right for at
//! least 90% of them, with the lower confidence said (`cargo test --test explain_cut --
//! --nocapture` prints the score and the misses).

use assertscope::diagnose;
use assertscope::log;
use assertscope::report::Confidence;
use std::path::Path;

/// Causes a cut traceback can still show: the bad values of the op it stops in.
const BAD_VALUE_CAUSES: &[&str] = &[
    "target-out-of-range",
    "embedding-index-out-of-range",
    "index-out-of-bounds",
    "bce-input-range",
    "invalid-probabilities",
    "ctc-loss",
];

fn labelled(set: &str, prefix: &str) -> Vec<(String, String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(set);
    let index = std::fs::read_to_string(dir.join("index.tsv")).unwrap();
    index
        .lines()
        .skip(1)
        .filter_map(|row| {
            let cols: Vec<&str> = row.split('\t').collect();
            let bytes = std::fs::read(dir.join(format!("{}.log", cols[0]))).ok()?;
            Some((
                format!("{prefix}{}", cols[0]),
                cols[1].to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ))
        })
        .collect()
}

/// Whether a line is an exception line (`IndexError: …`, `torch.AcceleratorError: …`).
fn is_exception_line(line: &str) -> bool {
    let t = line.trim().trim_start_matches(['`', '*', '>', ' ']);
    let head = t.split(':').next().unwrap_or("");
    t.contains(':')
        && !head.contains(' ')
        && (head.ends_with("Error") || head.ends_with("Exception"))
        && !head.contains('/')
}

/// The log up to (not including) the exception line that ends its last traceback, or None
/// when it has no frames before such a line.
fn cut_before_message(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let last_frame = lines.iter().rposition(|l| {
        let t = l.trim_start();
        t.starts_with("File \"") || t.starts_with("File ") || t.starts_with("Cell In")
    })?;
    let message = (last_frame + 1..lines.len()).find(|&i| is_exception_line(lines[i]))?;
    Some(lines[..message].join("\n") + "\n")
}

#[test]
fn cut_tracebacks_keep_their_cause() {
    let mut logs = labelled("devset", "");
    logs.extend(labelled("public", ""));
    let (mut total, mut right, mut low) = (0, 0, 0);
    for (id, want, text) in &logs {
        if !BAD_VALUE_CAUSES.contains(&want.as_str()) {
            continue;
        }
        let Some(cut) = cut_before_message(text) else { continue };
        let scan = log::scan(cut.as_bytes(), "cut.log", None).unwrap();
        let report = diagnose::diagnose(&[scan]);
        let (cause, confidence) = report
            .diagnoses
            .first()
            .map_or(("none".to_string(), None), |d| (d.cause.clone(), Some(d.confidence)));
        total += 1;
        if &cause == want {
            right += 1;
            low += (confidence != Some(Confidence::High)) as usize;
        } else {
            println!("miss {id}: got {cause}, want {want}");
        }
    }
    println!("cut before the message: cause {right}/{total}, {low} of them below high confidence");
    assert!(total >= 40, "only {total} logs could be cut");
    assert!(right as f64 >= 0.90 * total as f64, "cause right on {right} of {total} cut logs");
}
