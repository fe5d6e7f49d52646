//! Paste damage, applied to every labelled development log: the answer (root cause and
//! user frame) must survive the ways real users mangle a log when they copy it out of a
//! terminal, a notebook or a forum. Prints, per mutation, how many logs keep their cause
//! and frame (`cargo test --test explain_mutations -- --nocapture`).

use assertscope::diagnose;
use assertscope::log;
use std::path::Path;

struct Expected {
    id: String,
    cause: String,
    user_frame: String,
}

fn devset() -> Vec<Expected> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/devset");
    let index = std::fs::read_to_string(dir.join("index.tsv")).unwrap();
    index
        .lines()
        .skip(1)
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            Expected { id: cols[0].into(), cause: cols[1].into(), user_frame: cols[3].into() }
        })
        .collect()
}

/// The root cause and user frame (`file:line`, `-` for none) that explain gives.
fn answer(text: &[u8]) -> (String, String) {
    let scan = log::scan(text, "pasted.log", None).unwrap();
    let report = diagnose::diagnose(&[scan]);
    let Some(root) = report.diagnoses.first() else { return ("none".into(), "-".into()) };
    let frame = match &root.location {
        None => "-".to_string(),
        Some(l) => format!("{}:{}", l.file, l.line.map_or("null".to_string(), |n| n.to_string())),
    };
    (root.cause.clone(), frame)
}

#[path = "explain_support/mutations.rs"]
mod mutations;
use mutations::MUTATIONS;

#[test]
fn paste_damage_keeps_cause_and_frame() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/devset");
    let logs: Vec<(Expected, String)> = devset()
        .into_iter()
        .map(|e| {
            let bytes = std::fs::read(dir.join(format!("{}.log", e.id))).unwrap();
            (e, String::from_utf8_lossy(&bytes).into_owned())
        })
        .collect();
    let (mut pairs, mut causes, mut frames) = (0, 0, 0);
    let mut misses = Vec::new();
    println!("{:<26} {:>8} {:>8}", "mutation", "cause", "frame");
    for (name, mutate) in MUTATIONS {
        let (mut cause_ok, mut frame_ok) = (0, 0);
        for (expected, text) in &logs {
            let (cause, frame) = answer(mutate(text).as_bytes());
            let c = cause == expected.cause;
            let f = frame == expected.user_frame;
            cause_ok += c as usize;
            frame_ok += f as usize;
            if !c || !f {
                misses.push(format!(
                    "{name} / {}: got {cause} {frame}, want {} {}",
                    expected.id, expected.cause, expected.user_frame
                ));
            }
        }
        println!("{name:<26} {cause_ok:>5}/{} {frame_ok:>5}/{}", logs.len(), logs.len());
        pairs += logs.len();
        causes += cause_ok;
        frames += frame_ok;
    }
    let cause_rate = causes as f64 / pairs as f64;
    let frame_rate = frames as f64 / pairs as f64;
    println!("{:<26} {:>7.1}% {:>7.1}%", "all", cause_rate * 100.0, frame_rate * 100.0);
    for m in &misses {
        println!("miss: {m}");
    }
    assert!(cause_rate >= 0.97, "cause kept in {:.1}% of (log, mutation) pairs", cause_rate * 100.0);
    assert!(frame_rate >= 0.95, "frame kept in {:.1}% of (log, mutation) pairs", frame_rate * 100.0);
}

#[test]
fn mutations_change_the_text() {
    // A mutation that leaves a log unchanged would inflate the suite's score.
    let sample = "Traceback (most recent call last):\n  File \"/home/u/train.py\", line 12, in main\n    loss = criterion(out, y) & 'x' <tag> and a long line that goes on past eighty columns and then past one hundred and twenty columns of text, to be wrapped twice over\nRuntimeError: CUDA error: device-side assert triggered\n";
    for (name, mutate) in MUTATIONS {
        assert_ne!(mutate(sample), sample, "{name}");
    }
}
