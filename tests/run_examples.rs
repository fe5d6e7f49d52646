//! `assertscope run` on every bundled example (examples/*.py), as a user reads it: the
//! whole output is snapshotted (review changes with `cargo insta`), and three promises are
//! checked on each: the output is at most 40 lines longer than the plain traceback (the
//! proved origin path, two lines a step, counted apart), no sentence of advice is said twice,
//! and no frame of assertscope's own package is shown.
//! Needs the test Python with torch (see check_support).

mod check_support;
use check_support::{has_modules, python};
use regex::Regex;
use std::path::{Path, PathBuf};
use std::process::Command;

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The command that runs an example: torchrun with two ranks for the data-parallel one.
fn argv(example: &Path) -> Vec<String> {
    let py = python().to_string_lossy().into_owned();
    let script = example.strip_prefix(REPO).unwrap().to_string_lossy().into_owned();
    if script.contains("ddp") {
        let torchrun = ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"];
        std::iter::once(py).chain(torchrun.map(String::from)).chain([script]).collect()
    } else {
        vec![py, script]
    }
}

/// Everything the command printed, stdout and stderr in the order a terminal shows them.
fn output(argv: &[String]) -> String {
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#""$@" 2>&1"#)
        .arg("sh")
        .args(argv)
        .current_dir(REPO)
        .env("NO_COLOR", "1")
        .env("OMP_NUM_THREADS", "1")
        // The Ray example starts a local Ray instance: without this, Ray 2.60 turns token
        // authentication on and writes ~/.ray/auth_token, which later clusters then expect.
        .env("RAY_AUTH_MODE", "disabled")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn examples() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(Path::new(REPO).join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    found.sort();
    found
}

/// The text with what changes between machines and runs replaced: the checkout, the
/// Python's prefix, torchrun's timestamps and process ids; caret lines under a traceback's
/// code are left out (Python versions draw them differently).
fn normalise(text: &str) -> String {
    let prefix = Command::new(python())
        .args(["-c", "import os, sys; print(sys.prefix); print(os.path.realpath(sys.prefix))"])
        .output()
        .unwrap();
    let mut text = text.to_string();
    for prefix in String::from_utf8_lossy(&prefix.stdout).lines().filter(|l| !l.is_empty()) {
        text = text.replace(prefix, "<venv>");
    }
    text =
        text.replace(REPO, "<repo>").replace(&python().to_string_lossy().into_owned(), "<venv>/bin/python");
    // A rank's host, process and a peer's port change from run to run.
    let host =
        Command::new(python()).args(["-c", "import socket; print(socket.gethostname())"]).output().unwrap();
    let host = String::from_utf8_lossy(&host.stdout).trim().to_string();
    if !host.is_empty() {
        text = text.replace(&format!("on node {host} "), "on node <host> ");
    }
    let pid = Regex::new(r"pid \d+").unwrap();
    let port = Regex::new(r"\]:\d+").unwrap();
    text = port.replace_all(&pid.replace_all(&text, "pid <pid>"), "]:<port>").into_owned();
    let caret = Regex::new(r"^\s*[\^~]+\s*$").unwrap();
    let python_version = Regex::new(r"python3\.\d+").unwrap();
    text.lines()
        .filter(|l| !caret.is_match(l))
        .map(|l| python_version.replace_all(l.trim_end(), "python3.X").into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// run's own report: what follows `assertscope: … exited`.
fn report(run: &str) -> &str {
    run.split_once("\nassertscope: ").map_or("", |(_, r)| r)
}

/// The plain job's last traceback, from its `Traceback` line to the end.
fn last_traceback(plain: &str) -> &str {
    plain.rfind("Traceback (most recent call last):").map_or(plain, |at| &plain[at..])
}

/// The label line of a numbered step of the origin path (`1. …`, `size 2. made here: …`).
fn origin_step() -> Regex {
    Regex::new(r"^\s*\|\s*-+ (?:size )?\d+\. ").unwrap()
}

/// The sentences of advice: run's report and the GuardError's own lines.
fn advice(run: &str) -> Vec<String> {
    let guard_lines: Vec<&str> = run
        .lines()
        .filter(|l| l.contains("GuardError: "))
        .map(|l| l.split_once("GuardError: ").unwrap().1)
        .collect();
    let text = format!("{} {}", guard_lines.join(" "), report(run).replace('\n', " "));
    let words = Regex::new(r"\s+").unwrap();
    text.split(". ")
        .map(|s| words.replace_all(s.trim(), " ").into_owned())
        .filter(|s| s.split(' ').count() >= 5)
        .collect()
}

#[test]
fn run_on_every_bundled_example() {
    if !has_modules(&["torch"]) {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_assertscope").to_string();
    let examples = examples();
    let origin_step = origin_step();
    let package_frame =
        Regex::new(r#"(?m)(File "[^"]*/assertscope/|^File \S*/assertscope/|/assertscope/_guard/)"#).unwrap();
    assert!(examples.len() >= 6, "{examples:?}");
    for example in &examples {
        let name = example.file_stem().unwrap().to_string_lossy().into_owned();
        let plain = output(&argv(example));
        let guarded_argv: Vec<String> =
            [bin.clone(), "run".into(), "--".into()].into_iter().chain(argv(example)).collect();
        let run = normalise(&output(&guarded_argv));
        // A job of several ranks (torchrun's, Ray's) interleaves its ranks' output
        // differently from run to run: its snapshot is run's own report.
        let ranked = name.contains("ddp") || name.contains("ray");
        // What run adds, against what plain Python shows: for one process the whole output;
        // for a job of several ranks, whose own output changes from run to run (Ray's
        // deduplication and timing: 55 to 123 lines for the same job), run's report against
        // the plain job's last traceback.
        let (plain_lines, run_lines) = if ranked {
            (last_traceback(&plain).lines().count(), report(&run).lines().count())
        } else {
            (plain.lines().count(), run.lines().count())
        };
        // The proved origin path is drawn two lines a step (the code and its label): it is
        // what the report is for, and it is counted apart from the rest.
        let path_lines = 2 * run.lines().filter(|l| origin_step.is_match(l)).count();
        eprintln!(
            "{name}: plain {plain_lines} lines, run {run_lines} ({path_lines} of them the origin path)"
        );
        assert!(
            run_lines - path_lines <= plain_lines + 40,
            "{name}: {run_lines} lines under run ({path_lines} the origin path), {plain_lines} plain:\n{run}"
        );
        let sentences = advice(&run);
        let mut seen = std::collections::HashSet::new();
        let twice: Vec<&String> = sentences.iter().filter(|s| !seen.insert(s.as_str())).collect();
        assert!(twice.is_empty(), "{name}: said twice: {twice:?}\n{run}");
        assert!(!package_frame.is_match(&run), "{name}: a frame of assertscope's package:\n{run}");
        assert!(run.contains("error["), "{name}: no report:\n{run}");
        // Whether the job ended by itself or `run` stopped it after the failure (rather
        // than wait for the peers' timeouts) depends on the machine's speed: its first line
        // is left out.
        let shown = if ranked {
            report(&run).split_once('\n').map_or("", |(_, rest)| rest).to_string()
        } else {
            run.clone()
        };
        insta::assert_snapshot!(format!("run_{name}"), shown);
    }
}
