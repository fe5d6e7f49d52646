//! Messages as people re-type and re-quote them: the exception and assertion lines of every
//! labelled log (development and public sets) in lower case, with doubled spaces, inside
//! markdown backticks, or block-quoted, must keep their root cause (`cargo test --test
//! explain_transcribed -- --nocapture` prints the score per transformation and the misses).

use assertscope::diagnose;
use assertscope::log;
use std::path::Path;

fn labelled(set: &str) -> Vec<(String, String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(set);
    let index = std::fs::read_to_string(dir.join("index.tsv")).unwrap();
    index
        .lines()
        .skip(1)
        .filter_map(|row| {
            let cols: Vec<&str> = row.split('\t').collect();
            let bytes = std::fs::read(dir.join(format!("{}.log", cols[0]))).ok()?;
            Some((
                format!("{set}/{}", cols[0]),
                cols[1].to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ))
        })
        .collect()
}

/// A line that carries the error's words: an exception line or a kernel assertion line.
fn is_message_line(line: &str) -> bool {
    let t = line.trim_start();
    let head = t.split(':').next().unwrap_or("");
    let exception =
        t.contains(": ") && !head.contains(' ') && (head.ends_with("Error") || head.ends_with("Exception"));
    exception || t.contains("Assertion `")
}

fn on_message_lines(text: &str, f: impl Fn(&str) -> String) -> String {
    text.lines().map(|l| if is_message_line(l) { f(l) } else { l.to_string() }).collect::<Vec<_>>().join("\n")
        + "\n"
}

fn lower_case(text: &str) -> String {
    on_message_lines(text, |l| l.to_lowercase())
}

fn doubled_spaces(text: &str) -> String {
    on_message_lines(text, |l| l.replace(": ", ":  ").replacen(' ', "  ", 3))
}

fn backticks(text: &str) -> String {
    on_message_lines(text, |l| format!("`{}`", l.trim()))
}

fn block_quote(text: &str) -> String {
    text.lines().map(|l| format!("> {l}")).collect::<Vec<_>>().join("\n") + "\n"
}

/// A way a log is transcribed: its name, and the text as transcribed that way.
type Transformation = (&'static str, fn(&str) -> String);

const TRANSFORMATIONS: &[Transformation] = &[
    ("lower case", lower_case),
    ("doubled spaces", doubled_spaces),
    ("inline backticks", backticks),
    ("block quote", block_quote),
];

#[test]
fn retyped_and_requoted_messages_keep_their_cause() {
    let mut logs = labelled("devset");
    logs.extend(labelled("public"));
    let (mut pairs, mut right) = (0, 0);
    for (name, transform) in TRANSFORMATIONS {
        let mut kept = 0;
        for (id, want, text) in &logs {
            let scan = log::scan(transform(text).as_bytes(), "pasted.log", None).unwrap();
            let report = diagnose::diagnose(&[scan]);
            let cause = report.diagnoses.first().map_or("none".to_string(), |d| d.cause.clone());
            if &cause == want {
                kept += 1;
            } else {
                println!("miss {name} / {id}: got {cause}, want {want}");
            }
        }
        println!("{name:<18} {kept}/{}", logs.len());
        pairs += logs.len();
        right += kept;
    }
    let rate = right as f64 / pairs as f64;
    println!("all {:.1}%", rate * 100.0);
    assert!(rate >= 0.97, "cause kept in {:.1}% of (log, transformation) pairs", rate * 100.0);
}
