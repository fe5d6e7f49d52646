//! What a run leaves to read when the command ends: the guard reports of this run (a
//! reused or shared `--report-dir` may hold others'), and in a `--report-dir` the tail of
//! the output. Nothing here may cost the command its exit status: a report that cannot be
//! read is named on stderr and left out.

use crate::guard_report::GuardReport;
use crate::pyembed::private_dir;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A guard report's file, named `guard-RUN-HOST-PID-N.json` by the guard.
pub struct ReportFile {
    pub path: PathBuf,
    pub host: String,
    pub pid: i32,
}

/// The report files of run `run_id` in `dir`, in name order.
pub fn report_files(dir: &Path, run_id: &str) -> Vec<ReportFile> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let prefix = format!("guard-{run_id}-");
    let mut files: Vec<ReportFile> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let (host, pid) = parse_name(name.strip_prefix(&prefix)?.strip_suffix(".json")?)?;
            Some(ReportFile { path: e.path(), host, pid })
        })
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

/// `HOST-PID-N` (the host may contain `-`).
fn parse_name(rest: &str) -> Option<(String, i32)> {
    let mut parts = rest.rsplitn(3, '-');
    parts.next()?.parse::<u64>().ok()?;
    let pid = parts.next()?.parse().ok()?;
    Some((parts.next()?.to_string(), pid))
}

/// The reports of this run, oldest first; unreadable ones are named on stderr and skipped.
pub fn read_reports(dir: &Path, run_id: &str) -> Vec<GuardReport> {
    let mut reports = Vec::new();
    for file in report_files(dir, run_id) {
        let parsed = std::fs::read_to_string(&file.path)
            .map_err(anyhow::Error::from)
            .and_then(|text| GuardReport::parse(&text));
        match parsed {
            Ok(r) => reports.push(r),
            Err(e) => super::notices::warn(&format!(
                "{}: not a guard report ({e:#}); left out",
                file.path.display()
            )),
        }
    }
    reports.sort_by(|a, b| a.time.total_cmp(&b.time));
    reports
}

/// Writes the output's tail into a shared report directory as a new file: a file or
/// symlink planted under the name is never followed or overwritten.
pub fn write_output_tail(dir: &Path, bytes: &[u8]) -> anyhow::Result<PathBuf> {
    let base = output_file_stem();
    let mut last_error = None;
    for attempt in 0..100u32 {
        let name = if attempt == 0 { format!("{base}.log") } else { format!("{base}-{attempt}.log") };
        let path = dir.join(name);
        match private_dir::create_new(&path) {
            Ok(mut f) => {
                f.write_all(bytes).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last_error = Some(e),
            Err(e) => anyhow::bail!("{}: {e}", path.display()),
        }
    }
    anyhow::bail!(
        "{}: no free name for the output file ({})",
        dir.display(),
        last_error.map(|e| e.to_string()).unwrap_or_default()
    )
}

/// `output-rank3-node07-4242`: the rank (when a launcher set one for this process, as
/// srun does), the host and the pid, so that `explain DIR` can tell the files apart.
fn output_file_stem() -> String {
    let rank = crate::contract::rank();
    let host = private_dir::host_name();
    let pid = std::process::id();
    match rank {
        Some(r) => format!("output-rank{r}-{host}-{pid}"),
        None => format!("output-{host}-{pid}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_names_carry_host_and_pid() {
        assert_eq!(parse_name("node-07-4242-1"), Some(("node-07".into(), 4242)));
        assert_eq!(parse_name("h-1-x"), None);
        assert_eq!(parse_name("4242-1"), None);
    }
}
