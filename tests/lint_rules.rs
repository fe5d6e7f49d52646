//! Every lint rule against realistic training code: each `tests/fixtures/lint/rules/ASxxx_bad.py`
//! marks the lines that must be reported with `# expect: ASxxx`; each `ASxxx_good*.py` must
//! produce nothing. The real binary is run on each file and its JSON output compared.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lint/rules")
}

/// `(line, code)` of every `# expect: CODE` marker.
fn expected(text: &str) -> BTreeSet<(u64, String)> {
    let mut out = BTreeSet::new();
    for (index, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("# expect: ") {
            rest = &rest[at + "# expect: ".len()..];
            let code: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
            out.insert((index as u64 + 1, code));
        }
    }
    out
}

fn reported(path: &Path) -> BTreeSet<(u64, String)> {
    let output = Command::new(env!("CARGO_BIN_EXE_assertscope"))
        .args(["lint", "--format", "json"])
        .arg(path)
        .output()
        .expect("run assertscope");
    let json: Value = serde_json::from_slice(&output.stdout).expect("lint --format json prints JSON");
    let findings = json["findings"].as_array().expect("findings array");
    let status = output.status.code();
    assert_eq!(status, Some(if findings.is_empty() { 0 } else { 1 }), "exit status for {}", path.display());
    findings.iter().map(|f| (f["line"].as_u64().unwrap(), f["code"].as_str().unwrap().to_string())).collect()
}

fn check_rule(code: &str) {
    let mut bad = 0;
    let mut good = 0;
    for entry in std::fs::read_dir(fixtures()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.starts_with(&format!("{code}_")) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let want = expected(&text);
        if name.contains("_bad") {
            bad += 1;
            assert!(want.iter().any(|(_, c)| c == code), "{name} marks no {code} finding");
        } else {
            good += 1;
            assert!(want.is_empty(), "{name} is a true-negative file and must mark nothing");
        }
        assert_eq!(reported(&path), want, "findings of {name} (line, code)");
    }
    assert!(bad >= 1 && good >= 1, "{code} needs a true-positive and a true-negative file");
}

macro_rules! rule_tests {
    ($($name:ident => $code:literal,)*) => {
        $(#[test] fn $name() { check_rule($code); })*

        #[test]
        fn every_rule_has_fixtures() {
            let tested: Vec<&str> = vec![$($code),*];
            let documented: Vec<&str> = assertscope::lint::rule_docs().iter().map(|d| d.code).collect();
            assert_eq!(tested, documented);
        }
    };
}

rule_tests! {
    one_hot_target => "AS101",
    target_column_shape => "AS102",
    bce_without_sigmoid => "AS103",
    head_size_mismatch => "AS104",
    tokens_added_without_resize => "AS105",
    embedding_too_small => "AS106",
    batchnorm_last_batch => "AS107",
    multinomial_invalid_probabilities => "AS108",
    hardcoded_cuda => "AS109",
    int32_class_target => "AS110",
    softmax_into_cross_entropy => "AS111",
    target_out_of_range => "AS112",
}

#[test]
fn rule_docs_are_complete_and_name_known_causes() {
    let kb = assertscope::kb::KnowledgeBase::get();
    let docs = assertscope::lint::rule_docs();
    let mut codes = BTreeSet::new();
    for doc in &docs {
        assert!(doc.code.starts_with("AS1") && doc.code.len() == 5, "{}", doc.code);
        assert!(codes.insert(doc.code), "duplicate code {}", doc.code);
        for (field, text) in [
            ("summary", doc.summary),
            ("what_it_does", doc.what_it_does),
            ("why_it_matters", doc.why_it_matters),
            ("example", doc.example),
            ("fix", doc.fix),
        ] {
            assert!(text.len() > 20, "{} has a thin {field}", doc.code);
        }
        assert!(kb.cause(doc.cause).is_some(), "{} names unknown cause {}", doc.code, doc.cause);
    }
}

/// docs/rules.md, where SARIF's helpUri points, is the rules' own documentation.
#[test]
fn docs_rules_md_is_generated_from_the_rule_docs() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules.md");
    let expected = assertscope::lint::rules_markdown();
    if std::env::var_os("ASSERTSCOPE_BLESS").is_some() {
        std::fs::write(&path, &expected).unwrap();
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(actual == expected, "docs/rules.md is stale: ASSERTSCOPE_BLESS=1 cargo test --test lint_rules");
    for rule in assertscope::lint::rule_docs() {
        assert!(actual.contains(&format!("\n## {}\n", rule.code)), "{} has no section", rule.code);
    }
}
