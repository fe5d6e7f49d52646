//! kb/hints.toml is the one home of the hint sentences. Every hint the Rust code renders
//! (check's findings, explain's diagnoses) must exist and have a value for each of its
//! placeholders among those the code passes; every hint must be used by some part; and
//! rendering follows the rules the Python package copies (tests/python/test_hints.py
//! expects the very strings asserted here).

use assertscope::kb::{Hint, KnowledgeBase};
use regex::Regex;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A place the code names a hint: `"hint-id", json!({"key": ..., ...})`.
#[derive(Debug)]
struct Use {
    file: String,
    id: String,
    keys: Vec<String>,
}

fn files_under(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    if dir.is_file() {
        out.push(dir.to_path_buf());
        return;
    }
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

/// The JSON object literal that starts at `text[start]` (a `{`), braces balanced.
fn object_literal(text: &str, start: usize) -> &str {
    let mut depth = 0;
    for (i, c) in text[start..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &text[start..=start + i];
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced json! object at byte {start}")
}

/// Every hint use in the Rust sources of check and explain.
fn rust_uses() -> Vec<Use> {
    let named = Regex::new(r#""([a-z0-9]+(?:-[a-z0-9]+)+)"\s*,\s*json!\(\s*\{"#).unwrap();
    let key = Regex::new(r#""([a-z_]+)"\s*:"#).unwrap();
    // A call of check's `hint(...)`, not a method such as `kb.hint(...)`.
    let call = Regex::new(r"(^|[^.\w])hint\(").unwrap();
    let mut files = Vec::new();
    for dir in ["src/check/checks", "src/diagnose/values.rs"] {
        files_under(&Path::new(ROOT).join(dir), "rs", &mut files);
    }
    let mut uses = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path.strip_prefix(ROOT).unwrap().display().to_string();
        let mut found = 0;
        for m in named.captures_iter(&text) {
            let whole = m.get(0).unwrap();
            let object = object_literal(&text, whole.end() - 1);
            let keys = key.captures_iter(object).map(|k| k[1].to_string()).collect();
            uses.push(Use { file: file.clone(), id: m[1].to_string(), keys });
            found += 1;
        }
        // In check, every call of `hint(` names its id literally, so the scan sees them all.
        if file.starts_with("src/check") {
            let calls = call.find_iter(&text).count() - text.matches("fn hint(").count();
            assert_eq!(
                calls, found,
                "{file}: a hint( call whose id is not a literal followed by json!({{...}})"
            );
        }
    }
    uses
}

/// The ids the Python package renders (`kb.hint("id", ...)`); test_hints.py checks their values.
fn python_ids() -> Vec<String> {
    let call = Regex::new(r#"kb\.hint\(\s*"([a-z0-9-]+)""#).unwrap();
    let mut files = Vec::new();
    files_under(&Path::new(ROOT).join("python/assertscope"), "py", &mut files);
    files
        .iter()
        .flat_map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            call.captures_iter(&text).map(|c| c[1].to_string()).collect::<Vec<_>>()
        })
        .collect()
}

fn placeholders(text: &str) -> Vec<String> {
    Regex::new(r"\{([^{}]*)\}").unwrap().captures_iter(text).map(|c| c[1].to_string()).collect()
}

fn values(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => unreachable!(),
    }
}

#[test]
fn every_hint_the_rust_code_names_exists_and_renders_with_the_values_it_passes() {
    let kb = KnowledgeBase::get();
    let uses = rust_uses();
    // check: 1-based labels, the void label, padding, shapes, dtypes; explain: five more.
    assert!(uses.len() >= 15, "the scan found too few hint uses: {uses:?}");
    for u in &uses {
        let hint =
            kb.hint(&u.id).unwrap_or_else(|| panic!("{}: hint {:?} is not in hints.toml", u.file, u.id));
        let given: Map<String, Value> = u.keys.iter().map(|k| (k.clone(), json!(7))).collect();
        let text = hint.render(&given).unwrap_or_else(|| {
            panic!("{}: {} needs {:?}, given {:?}", u.file, u.id, placeholders(&hint.text), u.keys)
        });
        assert!(
            !text.contains('{') && !text.contains('}'),
            "{}: {} left a placeholder: {text}",
            u.file,
            u.id
        );
    }
}

#[test]
fn every_hint_is_used_by_some_part() {
    let kb = KnowledgeBase::get();
    let mut used: Vec<String> = rust_uses().into_iter().map(|u| u.id).collect();
    used.extend(python_ids());
    for h in &kb.hints {
        assert!(used.contains(&h.id), "hint {} is in hints.toml but nothing renders it", h.id);
    }
    for id in python_ids() {
        assert!(kb.hint(&id).is_some(), "the Python package renders hint {id:?}, which is not in hints.toml");
    }
}

#[test]
fn hint_entries_are_well_formed() {
    let kb = KnowledgeBase::get();
    let kebab = Regex::new(r"^[a-z0-9]+(-[a-z0-9]+)*$").unwrap();
    let snake = Regex::new(r"^[a-z][a-z0-9_]*$").unwrap();
    for (i, h) in kb.hints.iter().enumerate() {
        assert!(kebab.is_match(&h.id), "{}: ids are kebab-case", h.id);
        assert!(kb.hints[..i].iter().all(|o| o.id != h.id), "{}: duplicate id", h.id);
        for p in placeholders(&h.text) {
            assert!(snake.is_match(&p), "{}: placeholder {{{p}}} is not a snake_case name", h.id);
        }
        let stray = h.text.matches('{').count() != placeholders(&h.text).len()
            || h.text.matches('}').count() != placeholders(&h.text).len();
        assert!(!stray, "{}: a brace that is not a placeholder", h.id);
        assert!(h.text.ends_with('.'), "{}: a hint is whole sentences", h.id);
        // The guard and explain put a hint first in the fix, as its opening sentence.
        assert!(!h.text.starts_with(|c: char| c.is_lowercase()), "{}: a hint starts a sentence", h.id);
    }
}

/// The same strings are expected from Python's `kb.hint` in tests/python/test_hints.py.
#[test]
fn rendering_fills_strings_as_they_are_and_other_values_as_json() {
    let kb = KnowledgeBase::get();
    let render = |id: &str, v: Value| kb.hint(id).unwrap().render(&values(v)).unwrap();
    assert_eq!(
        render("one-based-labels", json!({"max": 10, "last": 9, "needed": 11})),
        "The labels look 1-based: a model with 10 outputs takes class ids 0 to 9, so the label 10 is out of \
         range. Subtract 1 from every label (`y - 1`), or give the model 11 outputs if class 0 is a real class."
    );
    assert_eq!(
        render("nan-before-range-check", json!({"metric": "loss", "metric_value": "nan", "metric_line": 4})),
        "NaN fails every range check: the op only noticed the NaN that training produced earlier (loss = nan \
         on log line 4)."
    );
    assert_eq!(
        render("index-past-tensor", json!({"value": -6, "range": "[-5, 5)", "what": "dimension 0 of a tensor of shape [5, 4]"})),
        "Index -6 is outside [-5, 5), the valid range for dimension 0 of a tensor of shape [5, 4]: the indexed \
         tensor is smaller than the code that made the indices assumes (a table or cache built for a shorter \
         length, ids counted from 1, indices computed before a crop or filter)."
    );
    let hint = |text: &str| Hint { id: "t".into(), cause: "none".into(), text: text.into() };
    let v = values(json!({"list": [1, 2], "float": 1.5, "flag": true, "none": null, "text": "ok"}));
    assert_eq!(
        hint("{list} {float} {flag} {none} {text}").render(&v).as_deref(),
        Some("[1,2] 1.5 true null ok")
    );
    assert_eq!(hint("a {missing} b").render(&v), None);
    assert_eq!(hint("a {text").render(&v), None);
    assert_eq!(hint("no placeholder").render(&v).as_deref(), Some("no placeholder"));
}

/// explain on a log of a class target past the classes: the hint its values show leads the
/// fix, rendered from hints.toml.
#[test]
fn explain_gives_the_hint_the_values_show_as_the_fix() {
    let kb = KnowledgeBase::get();
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("10", "one-based-labels", json!({"max": 10, "last": 9, "needed": 11})),
        ("255", "void-label-255", json!({})),
        ("12", "head-too-small", json!({"max": 12, "bound": 10, "needed": 13, "last": 9})),
        ("-1", "padding-label", json!({"value": -1})),
    ];
    for (target, id, filled) in cases {
        let log = dir.path().join(format!("target{target}.log"));
        std::fs::write(
            &log,
            format!(
                "num_classes = 10\nTraceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n    \
                 loss = F.cross_entropy(logits, y)\nIndexError: Target {target} is out of bounds.\n"
            ),
        )
        .unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_assertscope"))
            .args(["explain", "--json"])
            .arg(&log)
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let d = &report["diagnoses"][0];
        assert_eq!(d["cause"], "target-out-of-range", "{target}: {d}");
        let expected = kb.hint(id).unwrap().render(&values(filled)).unwrap();
        // The hint is the fix: it replaces the cause's general fix rather than preceding it.
        assert_eq!(d["fix"].as_str().unwrap(), expected, "{target}");
    }
}
