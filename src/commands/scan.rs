//! `assertscope scan`: iterates the user's Dataset or DataLoader in their own Python
//! (the embedded `assertscope.scan` module), which gathers the facts of every batch;
//! the checks of `check` judge them here, and the dataset index of each bad sample is
//! reported.
//!
//! The Python side writes its facts to a private file, not stdout: the user's code
//! may print anything. The child's stdout is sent to our stderr so that `--json` output
//! stays clean.

use crate::check::scan_facts::{self, ScanFacts, ScanPlan};
use crate::check::scan_report::{human, report, Summary};
use crate::contract::scan_flag;
use crate::diagnostic::Severity;
use crate::exit;
use crate::pyembed::Materialized;
use crate::render::style::{ColorChoice, Palette};
use anyhow::Context;
use std::ffi::OsString;
use std::io::Write as _;
use std::process::{Command, Stdio};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  assertscope scan train.py:train_loader --num-classes 10
  assertscope scan mypkg.data:make_dataset --num-classes 100 --batch-size 128 --num-workers 4
  assertscope scan lm.py:loader --vocab-size 50257 --max-positions 1024 --json

Exit status: 0 clean, 1 problems found, 2 the target could not be loaded or iterated.")]
pub struct ScanArgs {
    /// path/to/file.py:name or package.module:name of a Dataset, a DataLoader, or a
    /// zero-argument function returning one
    #[arg(value_name = "TARGET")]
    pub target: String,
    #[command(flatten)]
    pub labels: crate::check::LabelArgs,
    /// Dict key or tuple position of the labels in a batch [default: labels/label/target/y, or position 1]
    #[arg(long, value_name = "KEY")]
    pub label_key: Option<String>,
    /// Dict key or tuple position of the inputs in a batch [default: input_ids/pixel_values/x..., or position 0]
    #[arg(long, value_name = "KEY")]
    pub input_key: Option<String>,
    /// Batch size when the target is a Dataset
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub batch_size: u64,
    /// DataLoader workers when the target is a Dataset
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub num_workers: u64,
    /// Stop after this many batches
    #[arg(long, value_name = "N")]
    pub max_batches: Option<u64>,
    /// module:name of the model (or a function returning it): a last batch of one sample
    /// is an error when it uses BatchNorm
    #[arg(long, value_name = "TARGET")]
    pub model: Option<String>,
    /// The Python interpreter that has your torch
    #[arg(long, value_name = "PATH", default_value = "python")]
    pub python: OsString,
    /// Print one assertscope.diagnosis/1 JSON object
    #[arg(long)]
    pub json: bool,
    /// No progress line (it is shown only while stderr is a terminal)
    #[arg(long)]
    pub no_progress: bool,
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

pub fn execute(args: ScanArgs) -> anyhow::Result<u8> {
    args.labels.validate()?;
    let plan = ScanPlan::new(&args.labels);
    let facts = match gather(&args, &plan)? {
        Gathered::Facts(facts) => *facts,
        // Stopped by a signal: the Python child has ended too; nothing more to say.
        Gathered::Stopped(signal) => return Ok(128u8.saturating_add(signal as u8)),
    };
    if let Some(failure) = &facts.error {
        if let Some(tb) = &failure.traceback {
            eprint!("{tb}");
        }
        anyhow::bail!("{}", failure.message);
    }
    let summary = Summary::of(&facts, args.label_key.clone());
    let scanned = scan_facts::inspect(facts, &plan)?;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        crate::render::json::write_report(&mut stdout, &report(&summary, &scanned))?;
    } else {
        let palette = Palette::new(args.color.for_stdout());
        stdout.write_all(human(&summary, &scanned, &palette).as_bytes())?;
    }
    stdout.flush()?;
    let errors = scanned.findings().any(|(_, f)| f.severity == Severity::Error);
    Ok(if errors { exit::PROBLEMS_FOUND } else { exit::OK })
}

/// What the Python child left: its facts, or nothing because a signal stopped the scan.
enum Gathered {
    Facts(Box<ScanFacts>),
    Stopped(i32),
}

/// Runs `python -m assertscope.scan` and reads the facts it wrote.
fn gather(args: &ScanArgs, plan: &ScanPlan) -> anyhow::Result<Gathered> {
    let package = Materialized::create()?;
    let out = package.path().join("scan-facts.json");
    let mut cmd = Command::new(&args.python);
    cmd.arg("-m").arg("assertscope.scan").arg(&args.target).arg(scan_flag::OUT).arg(&out);
    cmd.arg(scan_flag::PLAN).arg(plan.to_json().to_string());
    let optional = [
        (scan_flag::LABEL_KEY, args.label_key.clone()),
        (scan_flag::INPUT_KEY, args.input_key.clone()),
        (scan_flag::BATCH_SIZE, Some(args.batch_size.to_string())),
        (scan_flag::NUM_WORKERS, Some(args.num_workers.to_string())),
        (scan_flag::MAX_BATCHES, args.max_batches.map(|v| v.to_string())),
        (scan_flag::MODEL, args.model.clone()),
    ];
    for (flag, value) in optional {
        if let Some(v) = value {
            cmd.arg(flag).arg(v);
        }
    }
    if args.no_progress {
        cmd.arg(scan_flag::NO_PROGRESS);
    }
    cmd.env("PYTHONPATH", package.pythonpath());
    // The user's prints go to our stderr, so our stdout holds only the report.
    let stderr_copy = std::io::stderr().as_fd_stdio().context("duplicating stderr for the Python child")?;
    cmd.stdin(Stdio::null()).stdout(stderr_copy);
    let python = args.python.to_string_lossy().into_owned();
    let (status, stopped) =
        run_to_the_end(cmd).map_err(|e| anyhow::anyhow!("cannot run {python}: {e} (pass --python PATH)"))?;
    if let Some(signal) = stopped {
        return Ok(Gathered::Stopped(signal));
    }
    let text = std::fs::read_to_string(&out).map_err(|_| {
        anyhow::anyhow!(
            "{python} -m assertscope.scan ended ({status}) without writing its facts; is torch installed for {python}?"
        )
    })?;
    let facts = scan_facts::parse(&text).with_context(|| format!("{python} -m assertscope.scan"))?;
    Ok(Gathered::Facts(Box::new(facts)))
}

/// Runs the Python child in a process group of its own, so that the signals of a terminal
/// reach it through this process only, and ends that group (the child and its DataLoader
/// workers) when this process is told to stop (Ctrl-C, `kill`, a closed terminal), as
/// `timeout` does; the child also ends if this process is killed outright. Returns the
/// child's status, and the signal that stopped the scan, if one did.
fn run_to_the_end(mut cmd: Command) -> std::io::Result<(std::process::ExitStatus, Option<i32>)> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    use std::os::unix::process::CommandExt;
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    // SAFETY: setpgid and prctl are async-signal-safe and touch nothing of the parent.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            #[cfg(target_os = "linux")]
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    let group = child.id() as libc::pid_t;
    let handle = signals.handle();
    let stopper = std::thread::spawn(move || {
        let signal = signals.forever().next()?;
        // SAFETY: kill has no memory effects; the group is the child's own.
        unsafe { libc::kill(-group, libc::SIGTERM) };
        Some(signal)
    });
    let status = child.wait();
    handle.close();
    let stopped = stopper.join().unwrap_or(None);
    Ok((status?, stopped))
}

/// A `Stdio` writing to a duplicate of our stderr.
trait AsFdStdio {
    fn as_fd_stdio(&self) -> std::io::Result<Stdio>;
}

impl AsFdStdio for std::io::Stderr {
    fn as_fd_stdio(&self) -> std::io::Result<Stdio> {
        use std::os::fd::AsFd;
        Ok(Stdio::from(self.as_fd().try_clone_to_owned()?))
    }
}
