//! The whole output of every lint rule, text and JSON, on its `tests/fixtures/lint/rules`
//! file of true positives, held as insta snapshots (as ruff keeps one per rule): a change
//! of wording, span, label, fix or JSON field shows in review (`cargo insta review`).
//! `lint_rules.rs` checks which lines are reported; this checks what is said of them.

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lint/rules")
}

/// `assertscope lint` run from the fixtures' directory, so the paths it prints are the
/// bare file names.
fn lint(file: &str, format: &str) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_assertscope"))
        .current_dir(fixtures())
        .args(["lint", "--color", "never", "--format", format, file])
        .output()
        .expect("run assertscope lint");
    assert_eq!(output.status.code(), Some(1), "{file}: a file of true positives exits 1");
    String::from_utf8(output.stdout).expect("UTF-8 output")
}

fn snapshot_rule(code: &str) {
    let file = format!("{code}_bad.py");
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("snapshots/lint");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        insta::assert_snapshot!(format!("{code}_text"), lint(&file, "text"));
        insta::assert_snapshot!(format!("{code}_json"), lint(&file, "json"));
    });
}

macro_rules! rules {
    ($($name:ident => $code:literal),* $(,)?) => {
        $(#[test] fn $name() { snapshot_rule($code); })*

        #[test]
        fn every_rule_has_a_snapshot_test() {
            let tested = [$($code),*];
            let mut with_fixtures: Vec<String> = std::fs::read_dir(fixtures())
                .unwrap()
                .filter_map(|entry| {
                    let name = entry.unwrap().file_name().to_string_lossy().into_owned();
                    name.strip_suffix("_bad.py").map(str::to_string)
                })
                .collect();
            with_fixtures.sort();
            assert_eq!(with_fixtures, tested, "each rule with a _bad.py file needs its snapshot test here");
        }
    };
}

rules! {
    as101 => "AS101",
    as102 => "AS102",
    as103 => "AS103",
    as104 => "AS104",
    as105 => "AS105",
    as106 => "AS106",
    as107 => "AS107",
    as108 => "AS108",
    as109 => "AS109",
    as110 => "AS110",
    as111 => "AS111",
    as112 => "AS112",
}
