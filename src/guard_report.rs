//! The guard's reports: one JSON file per `GuardError`, written by the guard in each
//! process into the directory `run` gives it (`ASSERTSCOPE_REPORT_DIR`). `run` reads them
//! when the command ends; `explain DIR` reads those of a multi-node job.

use crate::report::Diagnosis;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const SCHEMA: &str = "assertscope.guard-report/1";

/// How far a `GuardError` got. The guard writes its report as the error is raised, with
/// `"outcome": "raised"`, and rewrites it with `"uncaught"` when the error reaches the top
/// of a thread or of the process (`sys.excepthook`, `threading.excepthook`, the end of
/// the interpreter with it as the last error, a `multiprocessing` process ending with it),
/// itself or as the cause or context of the error that did. Only an uncaught error is a
/// failure: one the program caught and handled is at most a note.
///
/// The field was added to schema 1 without a new version: a report without it (written
/// by an older guard) is taken as uncaught, as every report was before.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Raised; not (yet) seen reaching the top of its thread or process.
    Raised,
    /// It reached the top of a thread or process, or ended it.
    #[default]
    Uncaught,
}

/// What one process's guard reported.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GuardReport {
    pub schema: String,
    /// Unix time of the GuardError, in seconds.
    pub time: f64,
    pub host: String,
    pub pid: u32,
    pub rank: Option<u32>,
    pub local_rank: Option<u32>,
    pub world_size: Option<u32>,
    #[serde(default)]
    pub argv: Vec<String>,
    pub diagnosis: Diagnosis,
    /// Facts the guard gathered in the failing process for the origin of the bad value
    /// (the user's frames, the dataset's indices, lines the value was seen on…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<crate::origin::runtime::Runtime>,
    #[serde(default)]
    pub outcome: Outcome,
}

impl GuardReport {
    pub fn parse(text: &str) -> anyhow::Result<GuardReport> {
        let report: GuardReport = serde_json::from_str(text)?;
        anyhow::ensure!(report.schema == SCHEMA, "schema is {:?}, not {SCHEMA}", report.schema);
        Ok(report)
    }

    /// The error reached the top of its thread or process: a failure of the job.
    pub fn is_failure(&self) -> bool {
        self.outcome == Outcome::Uncaught
    }
}

/// Whether a file is a guard report, by name.
pub fn is_report_file(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("guard-") && n.ends_with(".json"))
}

/// Every report in a directory (not recursive), oldest first.
pub fn read_dir(dir: &Path) -> anyhow::Result<Vec<GuardReport>> {
    let mut reports = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(reports),
        Err(e) => return Err(e).with_context(|| format!("{}", dir.display())),
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| is_report_file(p)).collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path).with_context(|| format!("{}", path.display()))?;
        let report =
            GuardReport::parse(&text).with_context(|| format!("{}: not a guard report", path.display()))?;
        reports.push(report);
    }
    reports.sort_by(|a, b| a.time.total_cmp(&b.time));
    Ok(reports)
}

/// How a report's process is named in a diagnosis.
pub fn who(r: &GuardReport) -> String {
    match r.rank {
        Some(rank) => format!("rank {rank} ({}, pid {})", r.host, r.pid),
        None => format!("process {} on {}", r.pid, r.host),
    }
}
