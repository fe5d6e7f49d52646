//! When to stop a command after one of its processes failed: ranks blocked in a
//! collective would otherwise wait for its timeout (often 30 minutes). The grace period
//! starts when the failed process has exited while others still run, never at the guard
//! report itself: a single process that is merely slow to exit is never stopped. Only a
//! failure counts, a `GuardError` that reached the top of its process
//! (`guard_report::Outcome`): a process that caught one and ended normally failed nothing.

use super::collect;
use super::job::{self, Job};
use crate::guard_report::GuardReport;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How often the report directory is listed (it may be on a network file system).
const LIST_EVERY: Duration = Duration::from_millis(250);

pub struct Policy {
    grace: Duration,
    report_dir: PathBuf,
    run_id: String,
    host: String,
    reports: HashMap<PathBuf, Seen>,
    listed_at: Option<Instant>,
    term_sent: Option<Instant>,
    kill_sent: bool,
}

struct Seen {
    /// The reporting process, when it ran on this host (its exit can be watched).
    local_pid: Option<i32>,
    /// Read and found a failure, or (a local process that has exited) final either way.
    settled: bool,
    /// When its process was seen to have exited after failing (for another host's
    /// process: when its failure was seen, the only moment known here).
    failed_at: Option<Instant>,
}

impl Policy {
    pub fn new(grace: Duration, report_dir: PathBuf, run_id: String) -> Policy {
        Policy {
            grace,
            report_dir,
            run_id,
            host: crate::pyembed::private_dir::host_name(),
            reports: HashMap::new(),
            listed_at: None,
            term_sent: None,
            kill_sent: false,
        }
    }

    /// Called while the command runs; returns true once it has decided to stop it.
    pub fn tick(&mut self, job: &Job) -> bool {
        if self.listed_at.is_none_or(|t| t.elapsed() >= LIST_EVERY) {
            self.listed_at = Some(Instant::now());
            for file in collect::report_files(&self.report_dir, &self.run_id) {
                let local_pid = (file.host == self.host).then_some(file.pid);
                self.reports.entry(file.path).or_insert(Seen { local_pid, settled: false, failed_at: None });
            }
            for (path, seen) in self.reports.iter_mut().filter(|(_, s)| !s.settled) {
                seen.look(path);
            }
        }
        let first_failure = self.reports.values().filter_map(|s| s.failed_at).min();
        match (first_failure, self.term_sent) {
            (Some(t), None) if t.elapsed() >= self.grace => {
                job.end_with(libc::SIGTERM);
                self.term_sent = Some(Instant::now());
            }
            (_, Some(t)) if !self.kill_sent && t.elapsed() >= job::KILL_AFTER => {
                job.end_with(libc::SIGKILL);
                self.kill_sent = true;
            }
            _ => {}
        }
        self.term_sent.is_some()
    }

    /// Whether the command was stopped by this policy.
    pub fn stopped(&self) -> bool {
        self.term_sent.is_some()
    }
}

impl Seen {
    /// A local report is read once its process has exited (its outcome is final then);
    /// another host's at each listing until it shows a failure.
    fn look(&mut self, path: &std::path::Path) {
        let exited = match self.local_pid {
            Some(pid) => !super::tree::is_running(pid),
            None => true,
        };
        if !exited {
            return;
        }
        let failed = read(path).is_some_and(|r| r.is_failure());
        if failed {
            self.failed_at = Some(Instant::now());
        }
        self.settled = failed || self.local_pid.is_some();
    }
}

fn read(path: &std::path::Path) -> Option<GuardReport> {
    GuardReport::parse(&std::fs::read_to_string(path).ok()?).ok()
}
