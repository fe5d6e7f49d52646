//! `assertscope explain` on every message text traced to PyTorch's source
//! (tests/fixtures/kb_provenance/sources.toml): each recorded instance, as the last line
//! of a plain traceback, is diagnosed as its message's cause at high confidence. A text
//! the knowledge base cannot match exactly (a wording it gets wrong) fails here.

use serde::Deserialize;
use std::path::Path;
use std::process::Command;

#[derive(Deserialize)]
struct Provenance {
    source: Vec<Source>,
}

#[derive(Deserialize)]
struct Source {
    id: String,
    instance: String,
}

#[derive(Deserialize)]
struct Messages {
    message: Vec<Message>,
}

#[derive(Deserialize)]
struct Message {
    id: String,
    cause: String,
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

#[test]
fn every_traced_text_is_diagnosed_as_its_cause() {
    let provenance: Provenance = toml::from_str(&read("tests/fixtures/kb_provenance/sources.toml")).unwrap();
    let messages: Messages = toml::from_str(&read("kb/messages.toml")).unwrap();
    let dir = std::env::temp_dir().join(format!("assertscope-source-texts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    for (n, s) in provenance.source.iter().enumerate() {
        let cause = &messages.message.iter().find(|m| m.id == s.id).unwrap().cause;
        let log = dir.join(format!("{n}.log"));
        let text = format!(
            "Traceback (most recent call last):\n  File \"/home/u/train.py\", line 42, in <module>\n    loss = step(batch)\n{}\n",
            s.instance
        );
        std::fs::write(&log, text).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_assertscope"))
            .args(["explain", "--json"])
            .arg(&log)
            .output()
            .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{}: {e}: {}", s.id, String::from_utf8_lossy(&out.stderr)));
        let first = &report["diagnoses"][0];
        // Inductor's generated check names no op: the code's op family (indexing or
        // embedding) decides between the two index causes.
        let accepted: Vec<&str> = if s.id.starts_with("inductor-") {
            vec!["index-out-of-bounds", "embedding-index-out-of-range"]
        } else {
            vec![cause.as_str()]
        };
        let found = first["cause"].as_str().unwrap_or_default();
        if !accepted.contains(&found) || first["confidence"].as_str() != Some("high") {
            failures.push(format!(
                "{}: {:?} was diagnosed as {found} ({}), not {} (high)",
                s.id,
                s.instance,
                first["confidence"],
                accepted.join(" or ")
            ));
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
