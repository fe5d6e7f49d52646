//! `assertscope run`'s supervisor: starts the user's command with the guard injected
//! into every Python process it starts, passes its output through live while the log
//! scanner reads it, forwards signals, and collects what the guard reported.
//!
//! [`supervise`] runs the three steps of [`supervisor::Running`]; [`options`] holds what a
//! run is asked and how it ended; the other modules are the parts: the child's command line
//! and environment (`command`), its output (`stdio`, `pty`, `output`, `sink`, `zero_copy`,
//! and the scanner's copy: `feed`, `file_feed`, `scan_input`), its processes and signals (`job`, `tree`, `signals`,
//! `stop`, `unguarded`), and the guard's reports (`collect`, `report_dir`, `ray`).

mod collect;
mod command;
mod feed;
mod file_feed;
mod job;
mod notices;
mod options;
mod output;
mod poll;
mod pty;
mod ray;
mod report_dir;
mod scan_input;
mod signals;
mod sink;
mod stdio;
mod stop;
mod supervisor;
mod tree;
pub mod unguarded;
#[cfg(target_os = "linux")]
mod zero_copy;

pub use command::{resolve_program, CannotStart};
pub use notices::{unguarded_notice, warn};
pub use options::{Ended, GuardMode, JobEnd, Options};
pub use report_dir::prepare_report_dir;
pub use signals::die_of;
pub use sink::Sink;

use std::ffi::OsString;

/// Runs the command to its end: until its own process has ended and every process of it
/// that still holds its output has closed it, as a shell pipeline waits for the last
/// writer. Errors are returned only for what happens before it starts; after that,
/// trouble is reported by `warn` and the command's status stands.
pub fn supervise(command: &[OsString], opts: &Options) -> anyhow::Result<JobEnd> {
    let mut running = supervisor::Running::start(command, opts)?;
    running.watch();
    Ok(running.finish())
}
