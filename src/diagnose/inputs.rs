//! What a job's inputs hold for a diagnosis: the logs (read by `log::input`) and the
//! guard's reports of a `run --report-dir` job, found in the files and directories named.

use crate::guard_report::{self, GuardReport};
use crate::log::input::{log_files_in, ranks_of, scan_file, scan_stdin, BinaryInput};
use crate::log::{self, LogScan};
use anyhow::Context;
use std::io::{self, IsTerminal};
use std::path::{Path, PathBuf};

/// What the inputs hold: logs, and the guard's reports of a `run --report-dir` job.
pub struct Inputs {
    pub scans: Vec<LogScan>,
    pub reports: Vec<GuardReport>,
    /// What a person must hear of the inputs, in the order it happened.
    pub notices: Vec<Notice>,
}

/// An input, or part of one, that was not diagnosed.
pub enum Notice {
    /// Could not be read (the status says so).
    Unreadable(anyhow::Error),
    /// Passed over inside a directory: not a log.
    Skipped(PathBuf, String),
}

/// Reads every input; directories contribute every log file and guard report below them.
/// An input that cannot be read becomes a notice, and the others are still read (as
/// ripgrep goes on past a file it cannot open).
pub fn read_inputs(inputs: &[PathBuf]) -> anyhow::Result<Inputs> {
    let mut out = Inputs { scans: Vec::new(), reports: Vec::new(), notices: Vec::new() };
    if inputs.is_empty() {
        if io::stdin().is_terminal() {
            anyhow::bail!(
                "no log given: pass a log file or directory, or pipe one in (python train.py 2>&1 | assertscope explain)"
            );
        }
        out.scans.push(scan_stdin()?);
        return Ok(out);
    }
    let mut files: Vec<(PathBuf, bool)> = Vec::new();
    for input in inputs {
        if input.as_os_str() == "-" {
            match scan_stdin() {
                Ok(scan) => out.scans.push(scan),
                Err(e) => out.unreadable(e),
            }
            continue;
        }
        match std::fs::metadata(input) {
            Err(e) => out.unreadable(anyhow::Error::new(e).context(input.display().to_string())),
            Ok(meta) if meta.is_dir() => {
                files.extend(out.log_files_of_directory(input).into_iter().map(|f| (f, true)))
            }
            Ok(_) => files.push((input.clone(), false)),
        }
    }
    let ranks = ranks_of(&files.iter().map(|(f, _)| f.as_path()).collect::<Vec<_>>());
    let mut logs_in_dirs = 0;
    for ((file, in_dir), rank) in files.iter().zip(ranks) {
        if guard_report::is_report_file(file) {
            match read_guard_report(file) {
                Ok(report) => out.reports.push(report),
                Err(e) => out.unreadable(e),
            }
            continue;
        }
        // Inside a directory, skip what is not a log (core dumps, checkpoints, JSON), and
        // say so: a log that was skipped silently would look like a rank that said nothing.
        if *in_dir && file.extension().is_some_and(|e| e == "json") {
            out.skipped(file, "JSON, not a log (guard reports are read when named guard-*.json)");
            continue;
        }
        match scan_file(file, rank) {
            Ok(scan) => {
                logs_in_dirs += usize::from(*in_dir);
                out.scans.push(scan)
            }
            Err(e) if *in_dir && e.downcast_ref::<BinaryInput>().is_some() => {
                out.skipped(file, &e.root_cause().to_string())
            }
            Err(e) => out.unreadable(e),
        }
    }
    if logs_in_dirs == 0
        && files.iter().any(|(_, in_dir)| *in_dir)
        && out.scans.is_empty()
        && out.reports.is_empty()
    {
        out.unreadable(anyhow::anyhow!("no text log in the directories given: every file there was skipped"));
    }
    log::ray_session::assign_ranks(&mut out.scans);
    Ok(out)
}

impl Inputs {
    /// The logs of a directory: a Ray session's by Ray's layout, else every log file in it;
    /// what cannot be read, and a directory with no log, are notices.
    fn log_files_of_directory(&mut self, dir: &Path) -> Vec<PathBuf> {
        let found = match log::ray_session::log_files(dir) {
            Ok(Some(files)) => files,
            Ok(None) => {
                let mut problems = Vec::new();
                let found = log_files_in(dir, &mut problems);
                problems.into_iter().for_each(|e| self.unreadable(e));
                found
            }
            Err(e) => {
                self.unreadable(anyhow::Error::new(e).context(dir.display().to_string()));
                Vec::new()
            }
        };
        if found.is_empty() {
            self.unreadable(anyhow::anyhow!("{}: the directory holds no log files", dir.display()));
        }
        found
    }

    fn unreadable(&mut self, err: anyhow::Error) {
        self.notices.push(Notice::Unreadable(err));
    }

    fn skipped(&mut self, file: &Path, why: &str) {
        self.notices.push(Notice::Skipped(file.to_path_buf(), why.to_string()));
    }

    /// How many inputs could not be read.
    pub fn unreadable_count(&self) -> usize {
        self.notices.iter().filter(|n| matches!(n, Notice::Unreadable(_))).count()
    }
}

fn read_guard_report(file: &Path) -> anyhow::Result<GuardReport> {
    let text = std::fs::read_to_string(file).with_context(|| format!("{}", file.display()))?;
    GuardReport::parse(&text).with_context(|| format!("{}: not a guard report", file.display()))
}
