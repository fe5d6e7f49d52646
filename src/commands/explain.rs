//! `assertscope explain`: a crash log (a file, several per-rank files, a directory of
//! them, or stdin) to its root cause, the user's line and the fix.

use crate::diagnose;
use crate::log::{self, LogScan};
use crate::render::{self, style::ColorChoice, style::Palette};
use crate::report::Report;
use anyhow::Context;
use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  assertscope explain train.log\n  python train.py 2>&1 | assertscope explain\n  assertscope explain logs/rank*.txt --json\n  assertscope explain torchrun-logs/"
)]
pub struct ExplainArgs {
    /// Log files, or directories of per-rank logs; `-` (or nothing, when piped) reads stdin
    pub inputs: Vec<PathBuf>,
    /// Print one assertscope.diagnosis/1 JSON object
    #[arg(long)]
    pub json: bool,
    /// When to use colours
    #[arg(long, value_enum, default_value_t)]
    pub color: ColorChoice,
}

pub fn execute(args: ExplainArgs) -> anyhow::Result<u8> {
    let scans = scan_inputs(&args.inputs)?;
    let report = diagnose::diagnose(&scans);
    let subject = if scans.len() == 1 { "the log" } else { "the logs" };
    print_report(&report, args.json, args.color, subject)?;
    Ok(exit_status(&report))
}

/// 0 when a diagnosis names a problem, 1 when there is none.
pub fn exit_status(report: &Report) -> u8 {
    if report.found_problem() {
        crate::exit::DIAGNOSED
    } else {
        crate::exit::NOT_FOUND
    }
}

pub fn print_report(report: &Report, json: bool, color: ColorChoice, subject: &str) -> anyhow::Result<()> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let written = if json {
        render::json::write_report(&mut out, report)
    } else {
        let palette = Palette::new(color.for_stdout());
        out.write_all(render::human::render(report, &palette, subject).as_bytes())
    };
    match written {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing the report"),
    }
}

/// Scans every input; directories contribute every log file below them.
pub fn scan_inputs(inputs: &[PathBuf]) -> anyhow::Result<Vec<LogScan>> {
    let mut scans = Vec::new();
    if inputs.is_empty() {
        if io::stdin().is_terminal() {
            anyhow::bail!(
                "no log given: pass a log file or directory, or pipe one in (python train.py 2>&1 | assertscope explain)"
            );
        }
        scans.push(scan_stdin()?);
        return Ok(scans);
    }
    for input in inputs {
        if input.as_os_str() == "-" {
            scans.push(scan_stdin()?);
            continue;
        }
        let meta = std::fs::metadata(input).with_context(|| format!("{}", input.display()))?;
        if meta.is_dir() {
            let files = log_files_in(input)?;
            anyhow::ensure!(!files.is_empty(), "{}: the directory holds no log files", input.display());
            for file in files {
                match scan_file(&file) {
                    Ok(scan) => scans.push(scan),
                    // Inside a directory, skip what is not text (core dumps, checkpoints).
                    Err(e) if e.downcast_ref::<BinaryInput>().is_some() => {}
                    Err(e) => return Err(e),
                }
            }
        } else {
            scans.push(scan_file(input)?);
        }
    }
    Ok(scans)
}

#[derive(Debug)]
struct BinaryInput;

impl std::fmt::Display for BinaryInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("binary data, not a text log")
    }
}

impl std::error::Error for BinaryInput {}

fn scan_stdin() -> anyhow::Result<LogScan> {
    scan_reader(io::stdin().lock(), "-", None).context("<stdin>")
}

fn scan_file(path: &Path) -> anyhow::Result<LogScan> {
    let file = File::open(path).with_context(|| format!("{}", path.display()))?;
    scan_reader(file, &path.display().to_string(), rank_from_path(path))
        .with_context(|| format!("{}", path.display()))
}

fn scan_reader<R: Read>(mut reader: R, name: &str, rank: Option<u32>) -> anyhow::Result<LogScan> {
    // Look at the start to refuse binary input, as grep and ripgrep do.
    let mut head = vec![0u8; 8192];
    let mut filled = 0;
    while filled < head.len() {
        match reader.read(&mut head[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        }
    }
    head.truncate(filled);
    if looks_binary(&head) {
        return Err(BinaryInput.into());
    }
    Ok(log::scan(io::Cursor::new(head).chain(reader), name, rank)?)
}

/// NUL bytes do not occur in text logs, and a file of mostly non-text bytes is no log.
fn looks_binary(head: &[u8]) -> bool {
    if head.contains(&0) {
        return true;
    }
    let text = String::from_utf8_lossy(head);
    let replaced = text.chars().filter(|&c| c == char::REPLACEMENT_CHARACTER).count();
    head.len() >= 64 && replaced * 4 > text.chars().count()
}

/// Log files under a directory, sorted (torchrun `--log-dir`, Slurm output directories).
fn log_files_in(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).with_context(|| format!("{}", d.display()))? {
            let entry = entry?;
            let path = entry.path();
            let name = entry.file_name();
            if name.to_string_lossy().starts_with('.') {
                continue;
            }
            let ft = entry.file_type()?;
            if ft.is_dir() {
                stack.push(path);
            } else if ft.is_file() {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The rank a per-rank log file belongs to, from its name: `rank3.log`, `rank_3.txt`,
/// torchrun's `--log-dir` layout `…/attempt_0/3/stderr.log`, `task-3.out`, `worker3.log`.
pub fn rank_from_path(path: &Path) -> Option<u32> {
    let stem = path.file_stem()?.to_string_lossy().to_ascii_lowercase();
    for key in ["rank", "task", "worker", "proc", "process"] {
        if let Some(i) = stem.rfind(key) {
            let digits: String = stem[i + key.len()..]
                .trim_start_matches(['_', '-', '.'])
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(n) = digits.parse() {
                return Some(n);
            }
        }
    }
    if matches!(stem.as_str(), "stdout" | "stderr" | "error" | "output") {
        let parent = path.parent()?.file_name()?.to_string_lossy();
        return parent.parse().ok();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_from_file_names() {
        for (p, want) in [
            ("logs/rank3.log", Some(3)),
            ("logs/rank_12.txt", Some(12)),
            ("run/attempt_0/2/stderr.log", Some(2)),
            ("slurm-task-5.out", Some(5)),
            ("train.log", None),
            ("logs/stdout.log", None),
        ] {
            assert_eq!(rank_from_path(Path::new(p)), want, "{p}");
        }
    }
}
