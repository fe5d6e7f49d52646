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
        assert!(
            root["explanation"].as_str().unwrap().contains("The log stops before the error message"),
            "{id}"
        );
        let text = Command::new(env!("CARGO_BIN_EXE_assertscope"))
            .arg("explain")
            .arg(dir.join(format!("{id}.log")))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&text.stdout);
        assert!(text.contains("The log stops before the error message"), "{id}: {text}");
    }
}

/// Every message of the catalogue of value checks (kb/value-checks.toml), as a CPU traceback
/// ending in it, comes out with its cause, op and the user's frame in every paste form:
/// as printed, in backticks, re-typed in lower case or with doubled blanks, block-quoted,
/// and broken over two lines.
/// A way a message reaches a log: its name, and the message as pasted that way.
type PasteForm = (&'static str, fn(&str) -> String);

#[test]
fn every_catalogue_message_is_explained_in_every_paste_form() {
    use assertscope::kb::KnowledgeBase;
    let kb = KnowledgeBase::get();
    let forms: [PasteForm; 6] = [
        ("as printed", |m| m.to_string()),
        ("backticks", |m| format!("`{m}`")),
        ("lower case", |m| m.to_lowercase()),
        ("doubled blanks", |m| m.replace(' ', "  ")),
        ("block quote", |m| format!("> {m}")),
        ("broken line", |m| {
            let words: Vec<&str> = m.split(' ').collect();
            let half = words.len() / 2;
            format!("{}\n{}", words[..half].join(" "), words[half..].join(" "))
        }),
    ];
    let mut misses = Vec::new();
    let mut checked = 0;
    for check in
        kb.value_checks.iter().filter(|c| !matches!(c.macro_name.as_str(), "CUDA_KERNEL_ASSERT" | "assert"))
    {
        let Some(message) =
            kb.messages.iter().find(|m| m.example.ends_with(&check.template.replace("{}", "1")))
        else {
            continue;
        };
        for (form, paste) in forms {
            let log = format!(
                "Traceback (most recent call last):\n  File \"/home/u/job/step.py\", line 12, in <module>\n    y = run(x)\n{}\n",
                paste(&message.example)
            );
            let scan = assertscope::log::scan(log.as_bytes(), "pasted.log", None).unwrap();
            let report = assertscope::diagnose::diagnose(&[scan]);
            let got = report.diagnoses.first().map(|d| {
                let frame = d.location.as_ref().map(|l| format!("{}:{}", l.file, l.line.unwrap_or(0)));
                (d.cause.clone(), d.op.clone(), frame)
            });
            let want =
                (message.cause.clone(), message.op.clone(), Some("/home/u/job/step.py:12".to_string()));
            if got.as_ref() != Some(&want) {
                misses.push(format!("{} / {form}: got {got:?}, want {want:?}", check.id));
            }
            checked += 1;
        }
    }
    assert!(checked >= 60, "only {checked} (message, form) pairs");
    assert!(misses.is_empty(), "{} of {checked} misexplained:\n{}", misses.len(), misses.join("\n"));
}
