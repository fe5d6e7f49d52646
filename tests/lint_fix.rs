//! `lint --fix` on every rule that fixes: each rule's bad fixture is fixed in a copy, with
//! the unsafe fixes too. Then every finding that carried a fix is gone (those without one
//! stay), the file still parses, a second `--fix` changes nothing, and the diff the fixes
//! make is a snapshot (`tests/fixtures/lint/snapshots/fix_ASxxx.diff.snap`).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn rules_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lint/rules")
}

fn lint(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_assertscope"))
        .current_dir(dir)
        .args(["lint", "--isolated", "--color", "never"])
        .args(args)
        .output()
        .expect("run assertscope")
}

fn findings(dir: &Path, code: &str) -> Vec<Value> {
    let out = lint(dir, &["--select", code, "--output-format", "json", "."]);
    let json: Value = serde_json::from_slice(&out.stdout).expect("JSON output");
    json["findings"].as_array().unwrap().clone()
}

fn assert_snapshot(name: &str, actual: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("fixtures/lint/snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!(name, actual));
}

/// The rules whose documentation says they fix.
fn fixable_rules() -> Vec<&'static str> {
    assertscope::lint::rule_docs()
        .into_iter()
        .filter(|d| !matches!(d.autofix, assertscope::lint::Autofix::None))
        .map(|d| d.code)
        .collect()
}

#[test]
fn every_fixable_rule_is_fixed_and_the_fix_is_stable() {
    let rules = fixable_rules();
    assert!(rules.len() >= 8, "{rules:?}");
    for code in rules {
        let dir = tempfile::tempdir().unwrap();
        let file = format!("{code}_bad.py");
        std::fs::copy(rules_dir().join(&file), dir.path().join(&file)).unwrap();
        let before = findings(dir.path(), code);
        let fixable = before.iter().filter(|f| f["fix"]["applicability"].as_str().is_some()).count();
        assert!(fixable > 0, "{code}: no finding of {file} carries a fix");

        let diff = lint(dir.path(), &["--select", code, "--diff", "--unsafe-fixes", "."]);
        assert_eq!(diff.status.code(), Some(1), "{code}: --diff exits 1 when it would change a file");
        assert_snapshot(&format!("fix_{code}.diff"), &String::from_utf8(diff.stdout).unwrap());

        let fixed = lint(dir.path(), &["--select", code, "--fix", "--unsafe-fixes", "."]);
        let text = String::from_utf8_lossy(&fixed.stdout);
        assert!(text.contains(&format!("fixed {fixable} problem")), "{code}: {text}");
        let after = findings(dir.path(), code);
        assert_eq!(after.len(), before.len() - fixable, "{code}: findings left after --fix: {after:#?}");
        assert!(after.iter().all(|f| f["fix"].is_null()), "{code}: a fixable finding is left");
        let syntax = findings_of_all(dir.path());
        assert!(!syntax.iter().any(|f| f["code"] == "syntax-error"), "{code}: the fixed file does not parse");

        let again = lint(dir.path(), &["--select", code, "--diff", "--unsafe-fixes", "."]);
        assert!(
            again.stdout.is_empty(),
            "{code}: a second --fix would change: {}",
            String::from_utf8_lossy(&again.stdout)
        );
    }
}

fn findings_of_all(dir: &Path) -> Vec<Value> {
    let out = lint(dir, &["--output-format", "json", "."]);
    let json: Value = serde_json::from_slice(&out.stdout).expect("JSON output");
    json["findings"].as_array().unwrap().clone()
}

#[test]
fn safe_fixes_only_without_unsafe_fixes_and_display_counts() {
    let dir = tempfile::tempdir().unwrap();
    for code in ["AS102", "AS103"] {
        let file = format!("{code}_bad.py");
        std::fs::copy(rules_dir().join(&file), dir.path().join(&file)).unwrap();
    }
    let report = lint(dir.path(), &["."]);
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(text.contains("= fix: squeeze the target to shape [N] (applied by --fix)"), "{text}");
    assert!(text.contains("[*] 3 fixable with --fix (2 more with --unsafe-fixes)"), "{text}");
    let fixed = lint(dir.path(), &["--fix", "."]);
    assert!(String::from_utf8_lossy(&fixed.stdout).contains("fixed 3 problems in 1 file"));
    let left = findings_of_all(dir.path());
    assert!(left.iter().any(|f| f["code"] == "AS103"), "unsafe fixes wait for --unsafe-fixes");
    assert!(!left.iter().any(|f| f["code"] == "AS102"));
    let bce = std::fs::read_to_string(dir.path().join("AS103_bad.py")).unwrap();
    assert_eq!(bce, std::fs::read_to_string(rules_dir().join("AS103_bad.py")).unwrap());
}

#[test]
fn rules_pages_say_whether_and_how_a_rule_fixes() {
    for (code, says) in [("AS102", "applied by --fix"), ("AS103", "--unsafe-fixes"), ("AS112", "none:")] {
        let out = Command::new(env!("CARGO_BIN_EXE_assertscope"))
            .args(["rules", code, "--color", "never"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("autofix") && text.contains(says), "{code}: {text}");
    }
}
