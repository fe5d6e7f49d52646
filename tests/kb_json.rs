//! The Python package reads the knowledge base as JSON (`kb/knowledge-base.json`, with the
//! standard library on every Python the package supports); the TOML files are the source.
//! This test generates the JSON from the TOML the binary embeds, after the binary's own
//! checks of it, and fails when the committed copy differs. To regenerate after editing
//! `kb/*.toml`:
//!
//!     ASSERTSCOPE_BLESS=1 cargo test --test kb_json

use assertscope::kb::{KnowledgeBase, SOURCES};
use serde_json::{Map, Value};
use std::path::Path;

const REGENERATE: &str = "ASSERTSCOPE_BLESS=1 cargo test --test kb_json";

/// `{"causes": <causes.toml>, "asserts": <asserts.toml>, …}`, one key per file.
fn json_form() -> String {
    KnowledgeBase::parse(&SOURCES).unwrap_or_else(|e| panic!("the knowledge base is invalid: {e:#}"));
    let mut files = Map::new();
    for (name, text) in SOURCES {
        let value: Value = toml::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        files.insert(name.trim_end_matches(".toml").to_string(), value);
    }
    let mut text = serde_json::to_string_pretty(&Value::Object(files)).unwrap();
    text.push('\n');
    text
}

#[test]
fn the_python_copy_of_the_knowledge_base_is_in_sync_with_the_toml() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/assertscope/kb/knowledge-base.json");
    let expected = json_form();
    if std::env::var_os("ASSERTSCOPE_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &expected).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == expected,
        "kb/knowledge-base.json is out of date with kb/*.toml; regenerate it with `{REGENERATE}`"
    );
}
