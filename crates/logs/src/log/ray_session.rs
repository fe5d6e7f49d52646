//! A Ray session's log directory (`/tmp/ray/session_latest/logs` on each node): one
//! `worker-<worker id>-<job id>-<pid>.err` and `.out` per worker process, `raylet.out`,
//! `job-driver-<submission id>.log` for jobs submitted with `ray job submit`, and many
//! files of Ray's own (core worker, GCS, dashboard, events) that say nothing of the job.
//!
//! `explain DIR` reads the files of the job: the workers of its newest job (a long-lived
//! cluster keeps every job's), the newest submitted driver's log and the raylet's. A worker's
//! file does not say which rank it was: Ray Train's listing of its worker group (in the
//! controller's file) ties each pid to a rank, and `assign_ranks` gives the worker files'
//! events that rank once every file is scanned.

use super::scanner::LogScan;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The logs directory of a Ray session: `dir` itself, or its `logs` (`session_*/`).
pub fn logs_dir(dir: &Path) -> Option<PathBuf> {
    [dir.to_path_buf(), dir.join("logs")].into_iter().find(|d| d.join("raylet.out").is_file())
}

/// The files of a Ray session's logs directory worth reading; `None` when `dir` is not one.
pub fn log_files(dir: &Path) -> std::io::Result<Option<Vec<PathBuf>>> {
    let Some(logs) = logs_dir(dir) else { return Ok(None) };
    let mut workers: Vec<(PathBuf, u64)> = Vec::new();
    let mut drivers: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&logs)? {
        let entry = entry?;
        let path = entry.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
        if let Some(file) = WorkerFile::parse(name) {
            // Workers started before any job (job id ffffffff) never ran the job's code.
            if let Some(job) = file.job {
                workers.push((path, job));
            }
        } else if name.starts_with("job-driver-") && name.ends_with(".log") {
            drivers.push((entry.metadata()?.modified()?, path));
        } else if name == "raylet.out" || name == "raylet.err" {
            files.push(path);
        }
    }
    let newest_job = workers.iter().map(|(_, job)| *job).max();
    files.extend(workers.into_iter().filter(|(_, job)| Some(*job) == newest_job).map(|(p, _)| p));
    files.extend(drivers.into_iter().max().map(|(_, p)| p));
    files.sort();
    Ok(Some(files))
}

/// `worker-<worker id>-<job id>-<pid>.err|.out`.
#[derive(Debug, PartialEq, Eq)]
pub struct WorkerFile {
    /// The job, as a number (Ray prints job ids as little-endian hex); `None` for no job.
    pub job: Option<u64>,
    pub pid: String,
}

impl WorkerFile {
    pub fn parse(name: &str) -> Option<WorkerFile> {
        let stem = name.strip_suffix(".err").or_else(|| name.strip_suffix(".out"))?;
        let mut parts = stem.strip_prefix("worker-")?.rsplitn(3, '-');
        let pid = parts.next().filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))?;
        let job = parts.next().filter(|j| j.len() % 2 == 0 && j.bytes().all(|b| b.is_ascii_hexdigit()))?;
        let worker = parts.next()?;
        if worker.is_empty() || !worker.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let bytes: Vec<u8> =
            (0..job.len()).step_by(2).map(|i| u8::from_str_radix(&job[i..i + 2], 16).unwrap_or(0)).collect();
        let job = (!bytes.iter().all(|&b| b == 0xff))
            .then(|| bytes.iter().rev().fold(0u64, |n, &b| (n << 8) | u64::from(b)));
        Some(WorkerFile { job, pid: pid.to_string() })
    }

    /// The worker file a path names, by its file name.
    pub fn of(path: &Path) -> Option<WorkerFile> {
        WorkerFile::parse(path.file_name()?.to_str()?)
    }
}

/// Gives the events of each worker's file, read without a rank, the rank Ray Train's
/// listing (in any of the scans) ties its pid to.
pub fn assign_ranks(scans: &mut [LogScan]) {
    let ranks: HashMap<String, u32> =
        scans.iter().flat_map(|s| s.workers.iter()).map(|w| (w.pid.clone(), w.rank)).collect();
    if ranks.is_empty() {
        return;
    }
    for scan in scans.iter_mut() {
        let Some(file) = WorkerFile::of(Path::new(&scan.source)) else { continue };
        let Some(&rank) = ranks.get(&file.pid) else { continue };
        let fill = |r: &mut Option<u32>| {
            r.get_or_insert(rank);
        };
        scan.tracebacks.iter_mut().for_each(|t| fill(&mut t.rank));
        scan.errors.iter_mut().for_each(|e| fill(&mut e.rank));
        scan.assertions.iter_mut().for_each(|a| fill(&mut a.rank));
        scan.divergence.iter_mut().for_each(|d| fill(&mut d.rank));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_file_names() {
        let f = WorkerFile::parse(
            "worker-12bdeba800a19a8d1fc1f75eb0e1c037252aef3dbe8ab96f30d8902a-01000000-27133.err",
        );
        assert_eq!(f, Some(WorkerFile { job: Some(1), pid: "27133".into() }));
        let f = WorkerFile::parse("worker-1c09-ffffffff-26313.out").unwrap();
        assert_eq!(f.job, None);
        assert_eq!(WorkerFile::parse("worker-ab-02000000-7.out").unwrap().job, Some(2));
        for name in
            ["worker-ab-01000000-x.err", "worker.err", "python-core-worker-ab_1.log", "worker-01000000-7.err"]
        {
            assert_eq!(WorkerFile::parse(name), None, "{name}");
        }
    }
}
