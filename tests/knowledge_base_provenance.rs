//! The knowledge base's message texts against PyTorch's own source
//! (tests/fixtures/kb-provenance.toml): no hand-typed paraphrase. A verified message's
//! template must be built by the recorded source text, fragment by fragment, and its
//! example must be an instance of the template.

use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
struct Provenance {
    source: Vec<Source>,
    unverified: Vec<String>,
}

#[derive(Deserialize)]
struct Source {
    id: String,
    template: String,
    found: String,
    repo: String,
    path: String,
    commit: String,
    versions: String,
}

#[derive(Deserialize)]
struct Messages {
    message: Vec<Message>,
}

#[derive(Deserialize)]
struct Message {
    id: String,
    literal: String,
    example: String,
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

/// The contents of the C/C++ string literals in a piece of source, concatenated.
fn string_literals(source: &str) -> String {
    let mut out = String::new();
    let mut chars = source.chars();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        while let Some(c) = chars.next() {
            match c {
                '\\' => out.extend(chars.next()),
                '"' => break,
                c => out.push(c),
            }
        }
        out.push('\u{0}');
    }
    out
}

#[test]
fn every_verified_template_is_built_by_its_source_and_matches_its_example() {
    let provenance: Provenance = toml::from_str(&read("tests/fixtures/kb-provenance.toml")).unwrap();
    let messages: Messages = toml::from_str(&read("kb/messages.toml")).unwrap();
    for s in &provenance.source {
        assert!(
            s.repo == "pytorch/pytorch"
                && !s.path.is_empty()
                && s.commit.len() == 40
                && !s.versions.is_empty()
        );
        // Each fragment between placeholders is one or more adjacent string literals.
        let literals = string_literals(&s.found);
        let joined: String = literals.split('\u{0}').collect();
        let mut at = 0;
        for fragment in s.template.split("{}").filter(|f| !f.is_empty()) {
            let found = joined[at..].find(fragment);
            assert!(found.is_some(), "{}: {fragment:?} is not in the source text after byte {at}", s.id);
            at += found.unwrap() + fragment.len();
        }
        let message = messages.message.iter().find(|m| m.id == s.id);
        let message = message.unwrap_or_else(|| panic!("{}: no such message in kb/messages.toml", s.id));
        let pattern = s.template.split("{}").map(regex::escape).collect::<Vec<_>>().join(".+?");
        let re = regex::Regex::new(&pattern).unwrap();
        assert!(
            re.is_match(&message.example),
            "{}: the example is not an instance of {:?}",
            s.id,
            s.template
        );
        assert!(message.example.contains(&message.literal), "{}", s.id);
    }
}

#[test]
fn every_message_is_verified_or_listed_as_not_yet() {
    let provenance: Provenance = toml::from_str(&read("tests/fixtures/kb-provenance.toml")).unwrap();
    let messages: Messages = toml::from_str(&read("kb/messages.toml")).unwrap();
    for m in &messages.message {
        let verified = provenance.source.iter().filter(|s| s.id == m.id).count();
        let listed = provenance.unverified.iter().filter(|u| **u == m.id).count();
        assert_eq!(
            verified + listed,
            1,
            "{}: verified {verified} times, listed unverified {listed} times",
            m.id
        );
    }
    for u in &provenance.unverified {
        assert!(messages.message.iter().any(|m| &m.id == u), "{u}: listed, but not in the knowledge base");
    }
    println!("{} of {} messages traced to PyTorch's source", provenance.source.len(), messages.message.len());
}
