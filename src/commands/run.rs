//! `assertscope run -- CMD…`: run a training command with the guard injected, then
//! diagnose how it ended.

use crate::diagnose;
use crate::diagnostic::{Diagnostic, Severity};
use crate::render::style::{ColorChoice, Palette};
use crate::report::Report;
use crate::run::{self, Ended, GuardMode, JobEnd, Sink};
use anyhow::Context;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  assertscope run -- python train.py --epochs 3\n  assertscope run -- torchrun --nproc_per_node=4 train.py\n  assertscope run --cpu -- python train.py\n  assertscope run --blocking -- python train.py\n  assertscope run --report diag.json -- accelerate launch train.py"
)]
pub struct RunArgs {
    /// Run code written for CUDA on the CPU, unmodified: the same bug raises a readable error
    #[arg(long)]
    pub cpu: bool,
    /// Run with CUDA_LAUNCH_BLOCKING=1 (and PYTORCH_USE_CUDA_DSA=1): tracebacks point at the failing op
    #[arg(long)]
    pub blocking: bool,
    /// What the guard does: auto (async on CUDA, sync on CPU), sync, async, or off
    #[arg(long, value_enum, default_value = "auto")]
    pub guard: GuardMode,
    /// Print the diagnosis as one JSON object on stdout (the command's output goes to stderr)
    #[arg(long)]
    pub json: bool,
    /// Also write the diagnosis JSON to FILE; the command's output is left untouched
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Keep each process's guard report in DIR (e.g. a shared directory for a multi-node job)
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
    /// Seconds the command may keep running after a failed process exited, before it is stopped
    #[arg(long, value_name = "SECONDS", default_value = "5", value_parser = parse_grace)]
    pub grace: Duration,
    /// Pass output through pipes even on a terminal (no pseudo-terminal)
    #[arg(long)]
    pub no_pty: bool,
    /// When to use colours in the diagnosis
    #[arg(long, value_enum, default_value_t)]
    pub color: ColorChoice,
    /// The command to run
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

pub fn execute(args: RunArgs) -> anyhow::Result<u8> {
    // Everything that can be refused is refused before the command starts, not after a
    // job of many hours.
    let mut report_file = match &args.report {
        Some(path) => Some(open_report(path)?),
        None => None,
    };
    let report_dir = args.report_dir.as_deref().map(run::prepare_report_dir).transpose()?;
    let opts = run::Options {
        mode: args.guard,
        cpu: args.cpu,
        blocking: args.blocking,
        sink: if args.json { Sink::Stderr } else { Sink::Stdout },
        pty: !args.no_pty,
        grace: args.grace,
        report_dir,
    };
    let outcome = match run::supervise(&args.command, &opts) {
        Ok(o) => o,
        Err(e) => {
            if let Some(c) = e.downcast_ref::<run::CannotStart>() {
                crate::render::style::print_error(&anyhow::anyhow!("{c}"));
                return Ok(c.status);
            }
            return Err(e);
        }
    };
    let program = args.command[0].to_string_lossy().into_owned();
    let report = diagnosis(&outcome, &args, &program);
    if let (Some(file), Some(path)) = (report_file.as_mut(), &args.report) {
        if let Err(e) = write_report(file, &report) {
            run::warn(&format!("--report {}: {e}", path.display()));
        }
    }
    if args.json {
        let mut out = std::io::stdout().lock();
        if let Err(e) = crate::render::json::write_report(&mut out, &report).and_then(|()| out.flush()) {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                run::warn(&format!("writing the diagnosis to stdout failed: {e}"));
            }
        }
    } else {
        let p = Palette::new(args.color.for_stderr());
        // Dying of SIGPIPE after the reader went away is how `cmd | head` ends, not a failure.
        let quiet_sigpipe = outcome.reader_gone && outcome.ended == Ended::Signaled(libc::SIGPIPE);
        let failed = outcome.ended != Ended::Exited(0) && !quiet_sigpipe;
        let mut text = String::new();
        if report.root().is_some() || failed {
            text.push('\n');
            text.push_str(&format!("{}assertscope{}: ", p.bold, p.reset));
            text.push_str(&ending(&outcome, &program));
            text.push('\n');
            if report.root().is_some() {
                text.push_str(&crate::render::human::render(&report, &p, "the run"));
            }
        }
        if let Some(note) = caught_note(&outcome) {
            text.push_str(&crate::render::text::render(&[note], p.enabled()));
        }
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }
    if !outcome.unguarded.is_empty() {
        let mut summary = format!(
            "the guard was off in {} Python process{} of this run:",
            outcome.unguarded.len(),
            if outcome.unguarded.len() == 1 { "" } else { "es" }
        );
        for u in &outcome.unguarded {
            summary.push_str(&format!("\n  {}", run::unguarded_notice(u)));
        }
        run::warn(&summary);
    }
    if let Some(sig) = outcome.die_of {
        run::die_of(sig);
    }
    Ok(exit_status(&outcome))
}

/// The `GuardError`s the program raised and caught itself: not the failure, but a bad
/// value the program went on past, worth a note.
fn caught_note(outcome: &JobEnd) -> Option<Diagnostic> {
    const LISTED: usize = 3;
    let carried = carried_reports(outcome);
    let caught: Vec<_> = outcome
        .reports
        .iter()
        .filter(|r| !r.is_failure() && !carried.iter().any(|c| std::ptr::eq(*c, *r)))
        .collect();
    caught.first()?;
    let title = match caught.len() {
        1 => "the program caught an assertscope.GuardError and went on; it is not the failure".to_string(),
        n => format!("the program caught {n} assertscope.GuardErrors and went on; they are not the failure"),
    };
    let mut note = Diagnostic::new(Severity::Note, None, title);
    let mut listed: Vec<(u32, &str)> = Vec::new();
    for r in &caught {
        if listed.len() == LISTED || listed.contains(&(r.pid, r.diagnosis.cause.as_str())) {
            continue;
        }
        listed.push((r.pid, r.diagnosis.cause.as_str()));
        let at = r.diagnosis.location.as_ref().map_or(String::new(), |l| {
            format!(" at {}{}", l.file, l.line.map_or(String::new(), |n| format!(":{n}")))
        });
        note = note.note("note", format!("{}: {}{at}", crate::guard_report::who(r), r.diagnosis.title));
    }
    if caught.len() > listed.len() && listed.len() == LISTED {
        note = note.note("note", format!("and {} more", caught.len() - LISTED));
    }
    Some(note)
}

/// The GuardErrors caught where they were raised but carried to another process that
/// failed with them: Ray catches a worker's error and raises it again in the driver, as
/// multiprocessing pools and concurrent.futures do. When the job failed and its output
/// ends in the same error (cause, file and line) as a caught report, that report is the
/// failure, with the values and dataset indices the output does not hold.
fn carried_reports(outcome: &JobEnd) -> Vec<&crate::guard_report::GuardReport> {
    if outcome.ended.exit_code() == 0 || outcome.reports.iter().any(|r| r.is_failure()) {
        return Vec::new();
    }
    let from_output = diagnose::diagnose_job(std::slice::from_ref(&outcome.scan), &[]);
    let Some(root) = from_output.root() else { return Vec::new() };
    let place =
        |l: &crate::report::Location| (Path::new(&l.file).file_name().map(|n| n.to_os_string()), l.line);
    let Some(at) = root.location.as_ref().map(place) else { return Vec::new() };
    outcome
        .reports
        .iter()
        .filter(|r| {
            r.diagnosis.cause == root.cause && r.diagnosis.location.as_ref().map(place) == Some(at.clone())
        })
        .collect()
}

/// The command's own status; a command that succeeded but whose output could not be
/// written did not succeed for its user (without `run` it would have failed to write).
fn exit_status(outcome: &JobEnd) -> u8 {
    match outcome.ended.exit_code() {
        // 1: what a program that failed to write its output exits with (Python's OSError).
        0 if outcome.output_lost => 1,
        code => code,
    }
}

/// `--grace`: seconds, as a number a timer can hold.
fn parse_grace(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text.trim().parse().map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if seconds.is_nan() || seconds < 0.0 {
        return Err(format!("{text} is not a number of seconds >= 0"));
    }
    Duration::try_from_secs_f64(seconds)
        .map_err(|_| format!("{text} seconds is longer than a timer can hold"))
}

/// Opens `--report FILE` for writing without truncating it: a path that cannot be
/// written is found before the job runs, and what the file held stays until the new
/// report replaces it.
fn open_report(path: &Path) -> anyhow::Result<std::fs::File> {
    anyhow::ensure!(!path.is_dir(), "--report {}: is a directory", path.display());
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .with_context(|| format!("--report {}: cannot be written", path.display()))
}

fn write_report(file: &mut std::fs::File, report: &Report) -> anyhow::Result<()> {
    use std::io::Seek;
    file.set_len(0)?;
    file.seek(std::io::SeekFrom::Start(0))?;
    crate::render::json::write_report(file, report)?;
    file.flush()?;
    Ok(())
}

/// The diagnosis of a run: what the guard reported, else what the output shows, with the
/// next step when a device-side assert got past the guard.
fn diagnosis(outcome: &JobEnd, args: &RunArgs, program: &str) -> Report {
    // Only errors that reached the top of a thread or process failed the job, or that
    // were carried to another process that failed with them.
    let mut failures: Vec<_> = outcome.reports.iter().filter(|r| r.is_failure()).cloned().collect();
    if failures.is_empty() {
        failures = carried_reports(outcome).into_iter().cloned().collect();
    }
    let mut report = diagnose::diagnose_job(std::slice::from_ref(&outcome.scan), &failures);
    if let Ok(cwd) = std::env::current_dir() {
        locations_relative_to(&mut report, &cwd);
    }
    if failures.is_empty() {
        with_next_step(report, outcome, args, program)
    } else {
        report
    }
}

/// Names files under the working directory relative to it, as the guard does, whether a
/// location came from a guard report or from a traceback in the output (which Python
/// prints with absolute paths).
fn locations_relative_to(report: &mut Report, cwd: &Path) {
    for d in &mut report.diagnoses {
        let Some(location) = d.location.as_mut() else { continue };
        if let Ok(relative) = Path::new(&location.file).strip_prefix(cwd) {
            if !relative.as_os_str().is_empty() {
                location.file = relative.to_string_lossy().into_owned();
            }
        }
    }
}

/// When the command died of a device-side assert the guard did not catch, the next
/// checklist step: a synchronous traceback, or the same code on the CPU.
fn with_next_step(mut report: Report, outcome: &JobEnd, args: &RunArgs, program: &str) -> Report {
    let Some(root) = report.diagnoses.first_mut() else { return report };
    let from_gpu =
        root.evidence.iter().any(|e| matches!(e.kind.as_str(), "assert" | "dsa-report" | "surfaced"))
            || matches!(root.cause.as_str(), "cascade" | "illegal-memory-access" | "unknown-device-assert");
    if !from_gpu {
        return report;
    }
    let why_missed = if args.guard == GuardMode::Off {
        "the guard was off (--guard off)".to_string()
    } else if let Some(u) = outcome.unguarded.first() {
        format!("the guard was off in pid {} ({})", u.pid, u.reason)
    } else if outcome.python_processes == 0 {
        format!("no Python process of `{program}` loaded the guard (is it a Python program, or started with python -I/-E?)")
    } else {
        match root.op.as_deref() {
            Some(op) => format!("the guard does not check {op} on this path (a custom kernel, or a library calling it directly)"),
            None => "the op that asserted is not one the guard checks".to_string(),
        }
    };
    let mut steps = Vec::new();
    if !args.blocking {
        steps.push("`assertscope run --blocking -- ...` sets CUDA_LAUNCH_BLOCKING=1, so the traceback stops at the op that failed");
    }
    if !args.cpu {
        steps.push("`assertscope run --cpu -- ...` runs the same code on the CPU, where the bad value raises a readable error with the offending value");
    }
    if !steps.is_empty() {
        root.fix = format!(
            "The device-side assert got past the guard: {why_missed}. Next: {}.\n\n{}",
            steps.join("; or "),
            root.fix
        );
    }
    report
}

fn ending(outcome: &JobEnd, program: &str) -> String {
    let how = match outcome.ended {
        Ended::Exited(0) => format!("{program} finished"),
        Ended::Exited(c) => format!("{program} exited with status {c}"),
        Ended::Signaled(s) => {
            let name = nix_signal_name(s);
            let hint = if s == 9 {
                " (the kernel's out-of-memory killer sends this when host memory runs out)"
            } else {
                ""
            };
            format!("{program} was killed by signal {s} ({name}){hint}")
        }
    };
    if outcome.stopped_after_report {
        format!("{how}; it was stopped after a process failed, instead of waiting for the other processes to time out")
    } else {
        how
    }
}

fn nix_signal_name(sig: i32) -> String {
    match nix::sys::signal::Signal::try_from(sig) {
        Ok(s) => s.as_str().to_string(),
        Err(_) => format!("signal {sig}"),
    }
}
