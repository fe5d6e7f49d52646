//! One supervised run, in its three steps: [`Running::start`] starts the command with the
//! guard injected, its output pumped through live and copied to the log scanner;
//! [`Running::watch`] passes signals and terminal resizes on, applies the stop policy and
//! says which Python processes the guard did not reach, until the command and its output
//! have ended; [`Running::finish`] gathers what the output and the guard reported.

use super::command::{self, resolve_program, CannotStart};
use super::notices::{unguarded_notice, warn};
use super::options::{Ended, GuardMode, JobEnd, Options};
use super::sink::{PumpEnd, Sink};
use super::{
    collect, feed, file_feed, job, output, poll, pty, ray, report_dir, scan_input, signals, stdio, stop,
    tree, unguarded,
};
use crate::log::{self, LogScan};
use crate::pyembed::Materialized;
use anyhow::Context;
use std::ffi::OsString;
use std::fs::File;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long the supervisor's loop sleeps at most: a signal or the end of a stream wakes it
/// at once; the rest (the stop policy, the look for unguarded processes) runs at this pace.
const TICK_MS: libc::c_int = 50;

/// How much of the command's output `--report-dir` keeps.
const OUTPUT_TAIL_BYTES: usize = 16 << 20;

/// A command started under the supervisor, and everything that watches it.
pub struct Running {
    package: Materialized,
    run_id: String,
    report_dir: PathBuf,
    job: job::Job,
    signals: signals::Signals,
    /// The pseudo-terminal's master and the terminal it stands for, to pass resizes on.
    pty: Option<(File, Sink)>,
    watch: Option<unguarded::Watch>,
    tail: Option<Arc<Mutex<output::Tail>>>,
    output_done: Arc<poll::EndSignal>,
    pumps: Vec<JoinHandle<PumpEnd>>,
    scanner: JoinHandle<std::io::Result<LogScan>>,
    stop: stop::Policy,
}

impl Running {
    /// Starts the command. Errors are returned only for what happens before it starts.
    pub fn start(command: &[OsString], opts: &Options) -> anyhow::Result<Running> {
        anyhow::ensure!(!command.is_empty(), "no command given: assertscope run -- python train.py");
        let program_path = resolve_program(&command[0])?;
        let guarded = opts.mode != GuardMode::Off || opts.cpu;
        let (package, run_id, report_dir) = materialize(command, opts)?;
        let mut cmd = command::build(&program_path, command, opts, &package, &report_dir, &run_id);
        let plumbing = stdio::attach(&mut cmd, opts.sink, opts.pty)?;
        let feed_pairs = (plumbing.streams.iter().map(|_| feed::feed()))
            .collect::<std::io::Result<Vec<_>>>()
            .context("opening a pipe to the log scanner")?;
        let signals = signals::Signals::install()?;
        let launch = job::prepare(&mut cmd, &signals, package.lock_fd());
        let job = launch.spawn(&mut cmd).map_err(|e| spawn_error(&program_path, e))?;
        // `cmd` holds the child's ends of the pipes: drop them, or no read would see the end.
        drop(cmd);
        let watch = guarded.then(|| unguarded::Watch::new(package.path(), package.announcements()));

        let tail =
            opts.report_dir.is_some().then(|| Arc::new(Mutex::new(output::Tail::new(OUTPUT_TAIL_BYTES))));
        let output_done = poll::EndSignal::new()?;
        let (feed_writers, feeds): (Vec<_>, Vec<_>) = feed_pairs.into_iter().unzip();
        let pumps: Vec<_> = plumbing
            .streams
            .into_iter()
            .zip(feed_writers)
            .map(|(s, feed)| output::pump(s.source, s.sink, feed, output_done.clone()))
            .collect();
        let files = plumbing.files.into_iter().map(|f| file_feed::FileFeed::new(f.file, f.from)).collect();
        let lines = scan_input::ScanInput::new(feeds, files, output_done.clone());
        let scanner = start_scanner(lines, tail.clone());
        let stop = stop::Policy::new(opts.grace, report_dir.clone(), run_id.clone());
        Ok(Running {
            package,
            run_id,
            report_dir,
            job,
            signals,
            pty: plumbing.pty,
            watch,
            tail,
            output_done,
            pumps,
            scanner,
            stop,
        })
    }

    /// Watches the command until its own process has ended and every process of it that
    /// still holds its output has closed it, as a shell pipeline waits for the last writer.
    pub fn watch(&mut self) {
        let mut size = self.pty.as_ref().and_then(|(_, sink)| pty::size_of(sink.fd()));
        loop {
            if let Some(w) = self.watch.as_mut() {
                for u in w.look() {
                    warn(&unguarded_notice(&u));
                }
            }
            let resized = self.job.on_signals(&self.signals.take());
            if let Some((master, sink)) = &self.pty {
                let now = pty::size_of(sink.fd());
                if resized || now != size {
                    size = now;
                    pty::resize_to(master, sink.fd());
                    self.job.signal(libc::SIGWINCH);
                }
            }
            self.job.reap();
            self.job.tick();
            if self.job.ended().is_none() {
                self.stop.tick(&self.job);
            } else if self.pumps.iter().all(|p| p.is_finished()) || self.job.gives_up_on_output() {
                break;
            }
            poll::wait_for(self.signals.wake_fd(), libc::POLLIN, TICK_MS);
        }
    }

    /// What the command's output and the guard reported; trouble on the way is reported
    /// by `warn` and the command's status stands.
    pub fn finish(self) -> JobEnd {
        let Running {
            mut package,
            run_id,
            report_dir,
            mut job,
            signals,
            pty,
            mut watch,
            tail,
            output_done,
            pumps,
            scanner,
            stop,
        } = self;
        let unguarded = watch.as_mut().map(|w| w.summary()).unwrap_or_default();
        if job_lives_on(&mut job) {
            // Processes of the job live on without the output (daemons): their Python
            // processes keep the guard (a later run removes the directory once none is left).
            package.keep();
        }
        let die_of = job.die_of();
        drop(signals);
        output_done.set();
        drop(pty);

        let (output_lost, reader_gone) = join_pumps(pumps);
        let scan = join_scanner(scanner);
        let mut reports = collect::read_reports(&report_dir, &run_id);
        reports.extend(collect::read_reports(&report_dir, &ray::workers_run_id(&run_id)));
        if let Some(tail) = tail {
            let kept = tail.lock().map(|t| t.contents()).unwrap_or_default();
            if let Err(e) = collect::write_output_tail(&report_dir, &kept) {
                warn(&format!("could not keep the output in --report-dir: {e:#}"));
            }
        }
        let end = JobEnd {
            ended: job.ended().unwrap_or(Ended::Exited(1)),
            scan,
            reports,
            python_processes: package.python_processes(),
            unguarded,
            stopped_after_report: stop.stopped(),
            output_lost,
            reader_gone,
            die_of,
        };
        // As the supervisor always let them go: the policy, the watchers, then the job and
        // the guard's directory.
        drop((stop, output_done, watch, job));
        drop(package);
        end
    }
}

/// The guard's package on disk with its start-up hook, this run's id, and the directory
/// the guard reports to (`--report-dir`, or a private one inside the package's).
fn materialize(command: &[OsString], opts: &Options) -> anyhow::Result<(Materialized, String, PathBuf)> {
    let package = Materialized::create()?;
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
    Ok((package, run_id, report_dir))
}

/// The log scanner's thread: it reads the copy of the output (and keeps its tail for
/// `--report-dir`), yielding to the job when both want the CPU.
fn start_scanner(
    lines: scan_input::ScanInput,
    tail: Option<Arc<Mutex<output::Tail>>>,
) -> JoinHandle<std::io::Result<LogScan>> {
    std::thread::spawn(move || {
        lines.yield_to_the_job();
        let input: Box<dyn std::io::Read> = match tail {
            Some(t) => Box::new(output::TeeTail::new(lines, t)),
            None => Box::new(lines),
        };
        log::scan(input, "the run", None)
    })
}

/// (output lost, reader gone): whether writing the output failed, or its reader went away.
fn join_pumps(pumps: Vec<JoinHandle<PumpEnd>>) -> (bool, bool) {
    let (mut output_lost, mut reader_gone) = (false, false);
    for pump in pumps {
        match pump.join() {
            Ok(PumpEnd::WriteFailed(sink, e)) => {
                warn(&format!("writing the command's output to {} failed: {e}", sink.name()));
                output_lost = true;
            }
            Ok(PumpEnd::SinkClosed) => reader_gone = true,
            _ => {}
        }
    }
    (output_lost, reader_gone)
}

fn join_scanner(scanner: JoinHandle<std::io::Result<LogScan>>) -> LogScan {
    match scanner.join() {
        Ok(Ok(scan)) => scan,
        Ok(Err(e)) => {
            warn(&format!("reading the command's output failed: {e}"));
            LogScan::default()
        }
        Err(_) => {
            warn("the log scanner failed; no diagnosis from the output");
            LogScan::default()
        }
    }
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

fn spawn_error(program: &Path, e: std::io::Error) -> anyhow::Error {
    let status = match e.kind() {
        std::io::ErrorKind::NotFound => 127,
        _ => 126,
    };
    CannotStart { message: format!("{}: cannot start: {e}", program.display()), status }.into()
}
