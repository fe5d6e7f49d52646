//! What a run is asked to do (the guard's mode, where output goes, the grace period) and
//! how it ended.

use super::sink::Sink;
use super::unguarded;
use crate::guard_report::GuardReport;
use crate::log::LogScan;
use std::path::PathBuf;
use std::time::Duration;

/// What the guard does in the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GuardMode {
    /// Asynchronous on CUDA tensors (no host-device synchronisation), synchronous on CPU.
    Auto,
    /// Check and raise at the op itself, synchronising with the GPU.
    Sync,
    /// Check on the device, raise at the next guarded call or sync point.
    Async,
    /// Inject nothing: only capture and diagnose the output.
    Off,
}

#[derive(Debug, Clone)]
pub struct Options {
    pub mode: GuardMode,
    pub cpu: bool,
    pub blocking: bool,
    pub sink: Sink,
    /// Use a pseudo-terminal for the child's output.
    pub pty: bool,
    /// How long the command may run on after a process that failed (wrote a guard report)
    /// has exited, before it is stopped: the other ranks may be blocked in a collective.
    pub grace: Duration,
    /// Keep the guard reports here instead of in a private temporary directory.
    pub report_dir: Option<PathBuf>,
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Exited(i32),
    Signaled(i32),
}

impl Ended {
    /// The status to exit with, as a shell reports it (128 + signal).
    pub fn exit_code(self) -> u8 {
        match self {
            Ended::Exited(c) => (c & 0xff) as u8,
            Ended::Signaled(s) => (128 + s).min(255) as u8,
        }
    }
}

/// How a supervised command ended, and what its output and the guard reported.
pub struct JobEnd {
    pub ended: Ended,
    pub scan: LogScan,
    pub reports: Vec<GuardReport>,
    /// How many Python processes the guard was injected into.
    pub python_processes: usize,
    /// The job's Python processes the guard did not reach.
    pub unguarded: Vec<unguarded::Unguarded>,
    /// The command was stopped by assertscope after a process failed and the grace period.
    pub stopped_after_report: bool,
    /// The command's output could not be written (a full disk): it must not look like success.
    pub output_lost: bool,
    /// The reader of the output went away (`| head`), so the command saw a broken pipe.
    pub reader_gone: bool,
    /// The signal `run` should end by, after reporting (see `job::Job::die_of`).
    pub die_of: Option<i32>,
}
