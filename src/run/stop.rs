//! When to stop a command after one of its processes failed: ranks blocked in a
//! collective would otherwise wait for its timeout (often 30 minutes). The grace period
//! starts when the failed process has exited while others still run, never at the guard
//! report itself: a single process that is merely slow to exit is never stopped.

use super::collect::{self, ReportFile};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long after SIGTERM before SIGKILL.
const KILL_AFTER: Duration = Duration::from_secs(10);
/// How often the report directory is listed (it may be on a network file system).
const LIST_EVERY: Duration = Duration::from_millis(250);

pub struct Policy {
    child: Pid,
    grace: Duration,
    report_dir: PathBuf,
    run_id: String,
    host: String,
    failed: Vec<Failed>,
    listed_at: Option<Instant>,
    term_sent: Option<Instant>,
    kill_sent: bool,
}

struct Failed {
    file: PathBuf,
    /// The failed process, when it ran on this host (its exit can be watched).
    local_pid: Option<i32>,
    /// When it was seen to have exited (for another host's process: when its report
    /// was seen, the only moment known here).
    exited_at: Option<Instant>,
}

impl Policy {
    pub fn new(child: u32, grace: Duration, report_dir: PathBuf, run_id: String) -> Policy {
        Policy {
            child: Pid::from_raw(child as i32),
            grace,
            report_dir,
            run_id,
            host: crate::pyembed::private_dir::host_name(),
            failed: Vec::new(),
            listed_at: None,
            term_sent: None,
            kill_sent: false,
        }
    }

    /// Called while the command runs; returns true once it has decided to stop it.
    pub fn tick(&mut self) -> bool {
        if self.listed_at.is_none_or(|t| t.elapsed() >= LIST_EVERY) {
            self.listed_at = Some(Instant::now());
            for file in collect::report_files(&self.report_dir, &self.run_id) {
                if !self.failed.iter().any(|f| f.file == file.path) {
                    self.failed.push(self.failed_process(file));
                }
            }
        }
        for f in &mut self.failed {
            if f.exited_at.is_none() && f.local_pid.is_some_and(|pid| !is_running(pid)) {
                f.exited_at = Some(Instant::now());
            }
        }
        let first_exit = self.failed.iter().filter_map(|f| f.exited_at).min();
        match (first_exit, self.term_sent) {
            (Some(t), None) if t.elapsed() >= self.grace => {
                let _ = kill(self.child, Signal::SIGTERM);
                self.term_sent = Some(Instant::now());
            }
            (_, Some(t)) if !self.kill_sent && t.elapsed() >= KILL_AFTER => {
                let _ = kill(self.child, Signal::SIGKILL);
                self.kill_sent = true;
            }
            _ => {}
        }
        self.term_sent.is_some()
    }

    fn failed_process(&self, file: ReportFile) -> Failed {
        let local_pid = (file.host == self.host).then_some(file.pid);
        let exited_at = if local_pid.is_some() { None } else { Some(Instant::now()) };
        Failed { file: file.path, local_pid, exited_at }
    }

    /// Whether the command was stopped by this policy.
    pub fn stopped(&self) -> bool {
        self.term_sent.is_some()
    }
}

/// A process that exists and is not a zombie (a zombie has exited; its parent has only
/// not collected its status yet).
fn is_running(pid: i32) -> bool {
    if kill(Pid::from_raw(pid), None).is_err_and(|e| e == nix::errno::Errno::ESRCH) {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses and may hold any byte.
        Ok(stat) => stat.rsplit_once(')').is_none_or(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => !std::path::Path::new("/proc/self").exists(),
    }
}
