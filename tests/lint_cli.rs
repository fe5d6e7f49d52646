//! `assertscope lint` as a user runs it: the real binary on real files, its exit status, and
//! its rendered output compared with snapshots in `tests/fixtures/lint/snapshots/` (review
//! changes with `cargo insta`).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lint")
}

fn lint_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_assertscope"))
        .current_dir(dir)
        .arg("lint")
        .args(args)
        .env_remove("CLICOLOR_FORCE")
        .output()
        .expect("run assertscope")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("UTF-8 output")
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).expect("JSON output")
}

fn assert_snapshot(name: &str, actual: &str) {
    let actual = actual.replace(env!("CARGO_PKG_VERSION"), "[VERSION]");
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("fixtures/lint/snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!(name, actual));
}

/// `(path, line, code)` of every finding.
fn findings(value: &Value) -> Vec<(String, u64, String)> {
    value["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["code"].as_str().unwrap().into(),
            )
        })
        .collect()
}

#[test]
fn text_output_is_rustc_style() {
    let output = lint_in(&fixtures(), &["project", "--color", "never"]);
    assert_eq!(output.status.code(), Some(1));
    assert_snapshot("project.txt", &stdout(&output));
}

#[test]
fn json_output() {
    let output = lint_in(&fixtures(), &["project", "--format", "json"]);
    assert_eq!(output.status.code(), Some(1));
    assert_snapshot("project.json", &stdout(&output));
}

#[test]
fn sarif_output_is_sarif_2_1_0() {
    let output = lint_in(&fixtures(), &["project", "--format", "sarif"]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert_snapshot("project.sarif", &text);
    let log: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(log["version"], "2.1.0");
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let results = run["results"].as_array().unwrap();
    let homepage = run["tool"]["driver"]["informationUri"].as_str().unwrap();
    assert!(homepage.starts_with("https://"), "{homepage}");
    for rule in rules.iter().filter(|r| r["id"].as_str().unwrap().starts_with("AS")) {
        let id = rule["id"].as_str().unwrap();
        let help = rule["helpUri"].as_str().unwrap();
        assert!(
            help.starts_with("https://") && help.ends_with(&format!("/docs/rules.md#{}", id.to_lowercase())),
            "{help}"
        );
    }
    assert_eq!(results.len(), 8);
    for result in results {
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], result["ruleId"], "ruleIndex points at the rule");
        assert!(["error", "warning"].contains(&result["level"].as_str().unwrap()));
        assert!(!result["message"]["text"].as_str().unwrap().is_empty());
        let location = &result["locations"][0]["physicalLocation"];
        assert!(location["artifactLocation"]["uri"].as_str().unwrap().starts_with("project/src/"));
        assert!(location["region"]["startLine"].as_u64().unwrap() >= 1);
        assert!(location["region"]["startColumn"].as_u64().unwrap() >= 1);
    }
}

#[test]
fn syntax_error_is_located_and_the_rest_of_the_file_is_linted() {
    let output = lint_in(&fixtures(), &["project/src/broken.py", "--format", "json"]);
    assert_eq!(output.status.code(), Some(1));
    let found = findings(&json(&output));
    let broken = "project/src/broken.py".to_string();
    assert!(found.contains(&(broken.clone(), 5, "syntax-error".into())), "{found:?}");
    assert!(
        found.contains(&(broken, 11, "AS110".into())),
        "the function after the error is still checked: {found:?}"
    );
}

#[test]
fn noqa_suppresses_named_codes_and_bare_noqa_everything() {
    let output = lint_in(&fixtures(), &["project/src/suppressed.py", "--format", "json"]);
    // Line 6 names AS102, line 7 is a bare noqa, line 8 names another code.
    assert_eq!(findings(&json(&output)), vec![("project/src/suppressed.py".into(), 8, "AS102".into())]);
}

#[test]
fn select_and_ignore_take_codes_and_prefixes() {
    let all = findings(&json(&lint_in(&fixtures(), &["project", "--format", "json"])));
    let codes = |args: &[&str]| -> Vec<String> {
        let mut full = vec!["project", "--format", "json"];
        full.extend_from_slice(args);
        findings(&json(&lint_in(&fixtures(), &full))).into_iter().map(|(_, _, c)| c).collect()
    };
    assert!(all.iter().any(|(_, _, c)| c == "AS101"));
    let ignored = codes(&["--select", "AS1", "--ignore", "AS101,AS109"]);
    assert!(!ignored.iter().any(|c| c == "AS101" || c == "AS109"), "{ignored:?}");
    assert!(ignored.iter().any(|c| c == "AS104"));
    let only = codes(&["--select", "as110"]);
    assert!(only.iter().all(|c| c == "AS110" || c == "syntax-error"), "{only:?}");
    assert!(only.iter().any(|c| c == "AS110"));

    let typo = lint_in(&fixtures(), &["project", "--select", "AS9"]);
    assert_eq!(typo.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&typo.stderr);
    assert!(stderr.contains("`AS9` names no lint rule"), "{stderr}");
}

#[test]
fn exit_status_clean_findings_unreadable() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("clean.py"),
        "import torch.nn.functional as F\n\n\ndef step(logits, y):\n    return F.cross_entropy(logits, y)\n",
    )
    .unwrap();
    let clean = lint_in(dir.path(), &["clean.py"]);
    assert_eq!(clean.status.code(), Some(0));
    assert_eq!(stdout(&clean), "no problems found in 1 file\n");

    let missing = lint_in(dir.path(), &["clean.py", "missing.py"]);
    assert_eq!(missing.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("cannot read missing.py: no such file or directory"), "{stderr}");

    std::fs::write(dir.path().join("latin1.py"), b"# caf\xe9\nx = 1\n").unwrap();
    std::fs::write(dir.path().join("bad.py"), "import torch.nn.functional as F\nF.nll_loss(x, y.int())\n")
        .unwrap();
    let mixed = lint_in(dir.path(), &[".", "--format", "json"]);
    assert_eq!(mixed.status.code(), Some(2), "unreadable input wins over findings");
    let value = json(&mixed);
    assert_eq!(
        findings(&value),
        vec![("bad.py".into(), 2, "AS110".into())],
        "readable files are still linted"
    );
    assert_eq!(value["unreadable"][0]["path"], "latin1.py");
    assert!(value["unreadable"][0]["message"].as_str().unwrap().contains("not UTF-8"));
}

#[test]
fn directories_are_walked_honouring_gitignore() {
    let dir = tempfile::tempdir().unwrap();
    let bad = "import torch.nn.functional as F\n\n\ndef f(logits, y):\n    return F.cross_entropy(logits, y.view(-1, 1))\n";
    for sub in ["src", "build", "src/nested", ".hidden"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        std::fs::write(dir.path().join(sub).join("model.py"), bad).unwrap();
    }
    std::fs::write(dir.path().join("src/notes.txt"), bad).unwrap();
    std::fs::write(dir.path().join(".gitignore"), "build/\n").unwrap();
    let output = lint_in(dir.path(), &[".", "--format", "json"]);
    let paths: Vec<String> = findings(&json(&output)).into_iter().map(|(p, _, _)| p).collect();
    assert_eq!(paths, vec!["src/model.py".to_string(), "src/nested/model.py".to_string()]);
    // A file named on the command line is linted even when ignored.
    let named = lint_in(dir.path(), &["build/model.py", "--format", "json"]);
    assert_eq!(named.status.code(), Some(1));
}

#[test]
fn missing_path_is_an_error_without_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let output = lint_in(dir.path(), &["missing.py"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stdout(&output), "", "no 'no problems found in 0 files' before the error");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim(), "error: cannot read missing.py: no such file or directory");
}

#[cfg(unix)]
#[test]
fn devices_are_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    // `lint /dev/zero` used to read until memory ran out.
    let output = lint_in(dir.path(), &["/dev/zero"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim(), "error: cannot read /dev/zero: not a regular file (a character device)");
}

#[test]
fn files_over_the_size_limit_are_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::File::create(dir.path().join("huge.py")).unwrap();
    // Sparse: 40 MiB of size, no 40 MiB written.
    file.set_len(40 << 20).unwrap();
    std::fs::write(dir.path().join("small.py"), "x = 1\n").unwrap();
    let output = lint_in(dir.path(), &[".", "--format", "json"]);
    assert_eq!(output.status.code(), Some(2));
    let value = json(&output);
    assert_eq!(value["files"], 1, "the small file is still linted");
    assert_eq!(value["unreadable"][0]["path"], "huge.py");
    assert_eq!(
        value["unreadable"][0]["message"],
        "file too large (40.0 MiB; lint reads Python files up to 32 MiB)"
    );
}

#[test]
fn github_format_writes_workflow_annotations() {
    let output = lint_in(&fixtures(), &["project/src/train.py", "--output-format", "github"]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert!(!lines.is_empty());
    for line in &lines {
        assert!(
            line.starts_with("::error title=assertscope (AS1")
                || line.starts_with("::warning title=assertscope (AS1"),
            "{line}"
        );
        assert!(line.contains(",file=project/src/train.py,line="), "{line}");
        // One finding per line: the message's own newlines are escaped.
        assert!(line.contains("::project/src/train.py:"), "{line}");
    }
    let head = lines.iter().find(|l| l.contains("(AS104)")).expect("the AS104 finding");
    assert!(head.contains(",line=15,col=34,"), "{head}");
    assert!(head.contains("%0Ahelp: size the head from the constant"), "{head}");
}

#[test]
fn exit_zero_keeps_findings_but_exits_zero_and_still_fails_on_unreadable_input() {
    let output = lint_in(&fixtures(), &["project/src/train.py", "--exit-zero"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(stdout(&output).contains("AS104"));
    let missing = lint_in(&fixtures(), &["project/src/train.py", "missing.py", "--exit-zero"]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn findings_carry_their_evidence_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("model.py"),
        "import torch.nn as nn\n\n\nclass Scorer(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.out = nn.Linear(8, 1)\n\n    def forward(self, x):\n        return self.out(x)\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("train.py"),
        "import torch.nn as nn\nfrom model import Scorer\n\nmodel = Scorer()\ncriterion = nn.BCELoss()\n\n\ndef step(x, y):\n    scores = model(x)\n    return criterion(scores, y)\n",
    )
    .unwrap();
    let value = json(&lint_in(dir.path(), &["train.py", "--output-format", "json"]));
    let finding = &value["findings"][0];
    assert_eq!((finding["code"].as_str(), finding["line"].as_u64()), (Some("AS103"), Some(10)));
    let related: Vec<(String, u64, String)> = finding["related"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().into(),
                r["line"].as_u64().unwrap(),
                r["label"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        related,
        vec![
            ("model.py".to_string(), 10, "`Scorer.forward` returns this".to_string()),
            ("train.py".to_string(), 9, "`scores` is assigned here".to_string()),
        ]
    );
    let sarif: Value =
        serde_json::from_slice(&lint_in(dir.path(), &["train.py", "--output-format", "sarif"]).stdout)
            .unwrap();
    let locations = sarif["runs"][0]["results"][0]["relatedLocations"].as_array().unwrap();
    assert_eq!(locations.len(), 2);
    assert_eq!(locations[0]["physicalLocation"]["artifactLocation"]["uri"], "model.py");
    assert_eq!(locations[0]["message"]["text"], "`Scorer.forward` returns this");
    let text = stdout(&lint_in(dir.path(), &["train.py", "--color", "never"]));
    assert!(
        text.contains(" 9 |     scores = model(x)\n   |              -------- `scores` is assigned here\n"),
        "{text}"
    );
    assert!(text.contains("  ::: model.py:10:16\n"), "{text}");
}

#[test]
fn self_referential_calls_end() {
    // Resolving `other` needs the arguments of `visit`, whose receiver is `other` again.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("graph.py"),
        "import torch.nn.functional as F\n\n\nclass Node:\n    def visit(self, other, y):\n        return F.cross_entropy(other.visit(self, y), y)\n\n    def walk(self, other, t):\n        return other.walk(self, t).softmax(-1).multinomial(1) / t\n",
    )
    .unwrap();
    let output = lint_in(dir.path(), &["graph.py"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn every_example_bug_is_found() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = findings(&json(&lint_in(root, &["examples", "--output-format", "json"])));
    let expected: Vec<(String, u64, String)> = [
        ("examples/added_tokens.py", 31, "AS106"),
        ("examples/ddp_labels.py", 32, "AS112"),
        ("examples/fraud_bce.py", 21, "AS103"),
        ("examples/road_segmentation.py", 30, "AS112"),
        ("examples/sample_temperature.py", 14, "AS108"),
        ("examples/star_ratings.py", 32, "AS112"),
    ]
    .into_iter()
    .map(|(p, l, c)| (p.to_string(), l, c.to_string()))
    .collect();
    assert_eq!(found, expected);
}

/// `assertscope lint --output-format json FILE` with its address space limited to 1 GiB, as
/// `ulimit -v` limits it.
fn lint_in_1_gib(dir: &Path, file: &str) -> Output {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_assertscope"));
    cmd.current_dir(dir).args(["lint", "--output-format", "json", file]);
    // SAFETY: setrlimit is async-signal-safe and allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: 1 << 30, rlim_max: 1 << 30 };
            match libc::setrlimit(libc::RLIMIT_AS, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    cmd.output().expect("run assertscope")
}

#[test]
fn deep_nesting_under_an_address_space_limit_is_a_finding_not_a_panic() {
    // Before: lint reserved 512 bytes of stack per source byte to free a deep tree, which
    // `ulimit -v` refused: a panic (exit 101).
    let dir = tempfile::tempdir().unwrap();
    // Two million unary minuses: CPython refuses it (a MemoryError in its parser).
    std::fs::write(dir.path().join("minus.py"), format!("x = {}1\n", "-".repeat(2_000_000))).unwrap();
    // A million-term sum: flat to parse, a million levels deep as a tree.
    let sum = vec!["1"; 1_000_000].join(" + ");
    std::fs::write(dir.path().join("sum.py"), format!("import torch\nx = {sum}\n")).unwrap();
    let out = lint_in_1_gib(dir.path(), "minus.py");
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let found = json(&out);
    assert_eq!(findings(&found), vec![("minus.py".to_string(), 1, "syntax-error".to_string())]);
    assert!(found.to_string().contains("levels deep"), "{found}");
    let out = lint_in_1_gib(dir.path(), "sum.py");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A file named on the command line whose extension says it is not Python is refused with
/// one line (Markdown parsed as Python reported "no problems found in 1 file").
#[test]
fn a_named_file_that_is_not_python_is_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "# Training\n\nRun `python train.py`.\n").unwrap();
    std::fs::write(dir.path().join("train"), "import torch\n").unwrap();
    let output = lint_in(dir.path(), &["README.md"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stdout(&output), "");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: README.md: not a Python file"), "{stderr}");
    // A script without an extension is Python, as ruff takes it.
    assert_eq!(lint_in(dir.path(), &["train"]).status.code(), Some(0));
}

/// A directory without Python files: ruff's warning on stderr, exit 0, no summary.
#[test]
fn a_path_without_python_files_warns_as_ruff_does() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    std::fs::write(dir.path().join("docs/notes.txt"), "nothing here\n").unwrap();
    let output = lint_in(dir.path(), &["docs"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output), "", "no 'no problems found in 0 files'");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim(), "warning: No Python files found under the given path(s)");
}

fn rules(id: &str) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_assertscope"))
        .args(["rules", id, "--color", "never"])
        .output()
        .unwrap();
    (output.status.code(), String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `assertscope rules ID`, which every report ends with: a cause id opens the cause page
/// (target-out-of-range opened lint rule AS112, which has that name), and says when a lint
/// rule shares the name; a rule goes by its code or its name.
#[test]
fn rules_opens_the_cause_page_for_a_cause_id_and_the_rule_for_a_code_or_name() {
    let (code, page) = rules("target-out-of-range");
    assert_eq!(code, Some(0));
    assert!(page.starts_with("target-out-of-range: class target out of range\n"), "{page}");
    assert!(
        page.contains(
            "`target-out-of-range` is also the name of lint rule AS112 (`assertscope rules AS112`)"
        ),
        "{page}"
    );
    let (_, rule) = rules("AS112");
    assert!(rule.starts_with("AS112 (target-out-of-range)"), "{rule}");
    let (_, by_name) = rules("one-hot-target");
    assert!(by_name.starts_with("AS101 (one-hot-target)"), "{by_name}");
    let (_, cause_only) = rules("nan-inf");
    assert!(cause_only.starts_with("nan-inf: ") && !cause_only.contains("lint rule"), "{cause_only}");
}
