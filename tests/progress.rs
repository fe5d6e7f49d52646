//! The progress line of `check`: drawn on stderr under a real pseudo-terminal, absent when
//! stderr is a pipe, and never a change to the report on stdout.
#![cfg(unix)] // drawn under a pseudo-terminal

use nix::pty::{openpty, OpenptyResult};
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_assertscope");

/// Six label shards, each a unit of its own with `--threads 1`, so that the line is drawn
/// at the latest after the first one is read, with five still to go.
fn shards(dir: &Path) -> Vec<String> {
    (0..6)
        .map(|shard| {
            let path = dir.join(format!("labels-{shard}.csv"));
            let rows: String = (0..20_000).map(|row| format!("{}\n", (row * 7 + shard) % 10)).collect();
            std::fs::write(&path, format!("label\n{rows}")).unwrap();
            path.to_str().unwrap().to_string()
        })
        .collect()
}

fn check(files: &[String]) -> Command {
    let mut command = Command::new(BIN);
    command.args(["check", "--num-classes", "10", "--threads", "1", "--color", "never"]).args(files);
    // The line appears after a delay on purpose (short runs stay quiet); here it is drawn at once.
    command.env("ASSERTSCOPE_PROGRESS_DELAY_MS", "0");
    command
}

/// Runs with stderr on a new pseudo-terminal and stdout on a pipe: (stdout, what the terminal got).
fn run_on_a_terminal(mut command: Command) -> (Output, String) {
    let OpenptyResult { master, slave } = openpty(None, None).unwrap();
    let child = command.stdout(Stdio::piped()).stderr(Stdio::from(slave)).spawn().unwrap();
    // Our copy of the slave went into the Command; it is dropped with it, so that reading the
    // master ends (EIO) once the child has exited.
    drop(command);
    let mut terminal = Vec::new();
    let mut master = File::from(master);
    let mut buffer = [0u8; 4096];
    loop {
        match master.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => terminal.extend_from_slice(&buffer[..n]),
        }
    }
    (child.wait_with_output().unwrap(), String::from_utf8_lossy(&terminal).into_owned())
}

#[test]
fn on_a_terminal_check_draws_progress_on_stderr_and_erases_it_before_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let files = shards(dir.path());
    let (output, terminal) = run_on_a_terminal(check(&files));
    assert_eq!(output.status.code(), Some(0), "{terminal}");
    let drawn: Vec<&str> = terminal.split('\r').filter(|line| line.starts_with("check: ")).collect();
    assert!(!drawn.is_empty(), "no progress line on the terminal: {terminal:?}");
    let size: u64 = files.iter().map(|f| std::fs::metadata(f).unwrap().len()).sum();
    let total = format!("of {:.1} kB", size as f64 / 1000.0);
    assert!(drawn.iter().all(|line| line.contains(&total)), "{drawn:?} (want {total})");
    assert!(drawn.iter().any(|line| line.contains("B/s") && line.contains("ETA ")), "{drawn:?}");
    assert!(terminal.ends_with("\r\x1b[K"), "the line is not erased at the end: {terminal:?}");
    // The report is the one a pipe gets.
    let piped = check(&files).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&piped.stdout));
}

#[test]
fn piped_check_prints_no_progress() {
    let dir = tempfile::tempdir().unwrap();
    let output = check(&shards(dir.path())).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("120,000"),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

#[test]
fn no_progress_keeps_a_terminal_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = check(&shards(dir.path()));
    command.arg("--no-progress");
    let (output, terminal) = run_on_a_terminal(command);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(terminal, "");
}

/// One large JSON Lines file, read as one unit (`--threads 1`): the share read moves as its
/// blocks are read (it stood at 0% until the unit ended, then jumped to the end).
#[test]
fn a_large_line_oriented_file_shows_progress_within_its_one_unit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("labels.jsonl");
    let rows: String = (0..1_500_000).map(|row| format!("{{\"label\": {}}}\n", row % 10)).collect();
    std::fs::write(&path, rows).unwrap();
    let mut command = check(&[path.to_str().unwrap().to_string()]);
    command.args(["--column", "label"]);
    let (output, terminal) = run_on_a_terminal(command);
    assert_eq!(output.status.code(), Some(0), "{terminal}");
    let shares: std::collections::BTreeSet<u64> = terminal
        .split('\r')
        .filter(|line| line.starts_with("check: "))
        .filter_map(|line| line.split_once('(')?.1.split_once("%)")?.0.parse().ok())
        .collect();
    let between: Vec<&u64> = shares.iter().filter(|&&s| s > 0 && s < 100).collect();
    assert!(between.len() >= 2, "the share jumped instead of moving: {shares:?}\n{terminal:?}");
}
