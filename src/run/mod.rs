//! `assertscope run`'s supervisor: starts the user's command with the guard injected
//! into every Python process it starts, passes its output through live while the log
//! scanner reads it, forwards signals, and collects what the guard reported.

mod collect;
mod command;
mod feed;
mod job;
mod output;
mod poll;
mod pty;
mod ray;
mod report_dir;
mod signals;
mod sink;
mod stdio;
mod stop;
mod tree;
pub mod unguarded;
#[cfg(target_os = "linux")]
mod zero_copy;

pub use command::{resolve_program, CannotStart};
pub use signals::die_of;
pub use sink::Sink;

use crate::guard_report::GuardReport;
use crate::log::{self, LogScan};
use crate::pyembed::Materialized;
use anyhow::Context;
use std::ffi::OsString;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
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

/// Says something on stderr without stopping: assertscope's own trouble never costs the
/// command its output or its exit status.
pub fn warn(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "assertscope: {message}");
}

/// Checks a `--report-dir` before the command starts, creating it if needed; the path is
/// made absolute, as the command may change directory.
pub fn prepare_report_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    let dir = std::path::absolute(dir).with_context(|| format!("--report-dir {}", dir.display()))?;
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("--report-dir {}: cannot create it", dir.display()))?;
    anyhow::ensure!(dir.is_dir(), "--report-dir {}: not a directory", dir.display());
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .with_context(|| format!("--report-dir {}: contains a NUL byte", dir.display()))?;
    // SAFETY: access(2) only reads the NUL-terminated path.
    let writable = unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } == 0;
    anyhow::ensure!(writable, "--report-dir {}: not writable", dir.display());
    Ok(dir)
}

/// Runs the command to its end: until its own process has ended and every process of it
/// that still holds its output has closed it, as a shell pipeline waits for the last
/// writer. Errors are returned only for what happens before it starts; after that,
/// trouble is reported by `warn` and the command's status stands.
pub fn supervise(command: &[OsString], opts: &Options) -> anyhow::Result<JobEnd> {
    anyhow::ensure!(!command.is_empty(), "no command given: assertscope run -- python train.py");
    let program_path = resolve_program(&command[0])?;
    let guarded = opts.mode != GuardMode::Off || opts.cpu;
    let mut package = Materialized::create()?;
    let run_id =
        report_dir::run_id(command, opts.report_dir.is_some()).context("choosing an id for this run")?;
    let report_dir = match &opts.report_dir {
        Some(d) => d.clone(),
        None => {
            let d = package.path().join("reports");
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&d)
                .with_context(|| format!("creating {}", d.display()))?;
            d
        }
    };
    package.install_start_up_hook()?;

    let mut cmd = command::build(&program_path, command, opts, &package, &report_dir, &run_id);
    let plumbing = stdio::attach(&mut cmd, opts.sink, opts.pty)?;
    let feed_pairs = (plumbing.streams.iter().map(|_| feed::feed()))
        .collect::<std::io::Result<Vec<_>>>()
        .context("opening a pipe to the log scanner")?;
    let signals = signals::Signals::install()?;
    let launch = job::prepare(&mut cmd, &signals, package.lock_fd());
    let mut job = launch.spawn(&mut cmd).map_err(|e| spawn_error(&program_path, e))?;
    // `cmd` holds the child's ends of the pipes: drop them, or no read would see the end.
    drop(cmd);
    let mut watch = guarded.then(|| unguarded::Watch::new(package.path(), package.announcements()));
    let mut unguarded = Vec::new();

    let tail = opts.report_dir.is_some().then(|| Arc::new(Mutex::new(output::Tail::new(OUTPUT_TAIL_BYTES))));
    let output_done = poll::EndSignal::new()?;
    let (feed_writers, feeds): (Vec<_>, Vec<_>) = feed_pairs.into_iter().unzip();
    let pumps: Vec<_> = plumbing
        .streams
        .into_iter()
        .zip(feed_writers)
        .map(|(s, feed)| output::pump(s.source, s.sink, feed, output_done.clone()))
        .collect();
    let files = plumbing.files.into_iter().map(|f| feed::FileFeed::new(f.file, f.from)).collect();
    let lines = feed::ScanInput::new(feeds, files, output_done.clone());
    let tail_kept = tail.clone();
    let scanner = std::thread::spawn(move || {
        lines.yield_to_the_job();
        let input: Box<dyn std::io::Read> = match tail_kept {
            Some(t) => Box::new(output::TeeTail::new(lines, t)),
            None => Box::new(lines),
        };
        log::scan(input, "the run", None)
    });

    let mut stop = stop::Policy::new(opts.grace, report_dir.clone(), run_id.clone());
    let mut size = plumbing.pty.as_ref().and_then(|(_, sink)| pty::size_of(sink.fd()));
    loop {
        if let Some(w) = watch.as_mut() {
            for u in w.look() {
                warn(&unguarded_notice(&u));
            }
        }
        let resized = job.on_signals(&signals.take());
        if let Some((master, sink)) = &plumbing.pty {
            let now = pty::size_of(sink.fd());
            if resized || now != size {
                size = now;
                pty::resize_to(master, sink.fd());
                job.signal(libc::SIGWINCH);
            }
        }
        job.reap();
        job.tick();
        if job.ended().is_none() {
            stop.tick(&job);
        } else if pumps.iter().all(|p| p.is_finished()) || job.gives_up_on_output() {
            break;
        }
        poll::wait_for(signals.wake_fd(), libc::POLLIN, TICK_MS);
    }
    if let Some(w) = watch.as_mut() {
        unguarded = w.summary();
    }
    if job_lives_on(&mut job) {
        // Processes of the job live on without the output (daemons): their Python
        // processes keep the guard (a later run removes the directory once none is left).
        package.keep();
    }
    let die_of = job.die_of();
    drop(signals);
    output_done.set();
    drop(plumbing.pty);

    let (mut output_lost, mut reader_gone) = (false, false);
    for pump in pumps {
        match pump.join() {
            Ok(sink::PumpEnd::WriteFailed(sink, e)) => {
                warn(&format!("writing the command's output to {} failed: {e}", sink.name()));
                output_lost = true;
            }
            Ok(sink::PumpEnd::SinkClosed) => reader_gone = true,
            _ => {}
        }
    }
    let scan = match scanner.join() {
        Ok(Ok(scan)) => scan,
        Ok(Err(e)) => {
            warn(&format!("reading the command's output failed: {e}"));
            LogScan::default()
        }
        Err(_) => {
            warn("the log scanner failed; no diagnosis from the output");
            LogScan::default()
        }
    };
    let mut reports = collect::read_reports(&report_dir, &run_id);
    reports.extend(collect::read_reports(&report_dir, &ray::workers_run_id(&run_id)));
    if let Some(tail) = tail {
        let kept = tail.lock().map(|t| t.contents()).unwrap_or_default();
        if let Err(e) = collect::write_output_tail(&report_dir, &kept) {
            warn(&format!("could not keep the output in --report-dir: {e:#}"));
        }
    }
    Ok(JobEnd {
        ended: job.ended().unwrap_or(Ended::Exited(1)),
        scan,
        reports,
        python_processes: package.python_processes(),
        unguarded,
        stopped_after_report: stop.stopped(),
        output_lost,
        reader_gone,
        die_of,
    })
}

/// Whether processes of the job still run without its output. A process closes its
/// output a moment before it has fully exited: those are given that moment.
fn job_lives_on(job: &mut job::Job) -> bool {
    for _ in 0..20 {
        job.reap();
        if !tree::members().iter().any(|m| tree::is_running(m.pid)) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// How long the supervisor's loop sleeps at most: a signal or the end of a stream wakes it
/// at once; the rest (the stop policy, the look for unguarded processes) runs at this pace.
const TICK_MS: libc::c_int = 50;

/// The notice for a Python process the guard did not reach.
pub fn unguarded_notice(u: &unguarded::Unguarded) -> String {
    format!(
        "the guard is off in pid {} (`{}`): {}; its output is still diagnosed",
        u.pid,
        short(&u.command),
        u.reason
    )
}

fn short(command: &str) -> String {
    const MOST: usize = 120;
    match command.char_indices().nth(MOST) {
        Some((i, _)) => format!("{}…", &command[..i]),
        None => command.to_string(),
    }
}

/// How much of the command's output `--report-dir` keeps.
const OUTPUT_TAIL_BYTES: usize = 16 << 20;

fn spawn_error(program: &Path, e: std::io::Error) -> anyhow::Error {
    let status = match e.kind() {
        std::io::ErrorKind::NotFound => 127,
        _ => 126,
    };
    CannotStart { message: format!("{}: cannot start: {e}", program.display()), status }.into()
}
