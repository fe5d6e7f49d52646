//! `assertscope run`'s supervisor: starts the user's command with the guard injected
//! into every Python process it starts, passes its output through live while the log
//! scanner reads it, forwards signals, and collects what the guard reported.

mod output;
#[cfg(unix)]
mod pty;

pub use output::Sink;

use crate::contract;
use crate::guard_report::{self as reports, GuardReport};
use crate::log::{self, LogScan};
use crate::pyembed::Materialized;
use anyhow::Context;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
    /// After a guard report, how long the command may take to exit on its own before it
    /// is stopped (other ranks may be blocked in a collective).
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

pub struct Outcome {
    pub ended: Ended,
    pub scan: LogScan,
    pub reports: Vec<GuardReport>,
    /// Pids of the Python processes the guard was injected into.
    pub python_processes: usize,
    /// The command was stopped by assertscope after a guard report and the grace period.
    pub stopped_after_report: bool,
}

/// The error for a command that cannot be started, with the shell's exit status.
#[derive(Debug)]
pub struct CannotStart {
    pub message: String,
    pub status: u8,
}

impl std::fmt::Display for CannotStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CannotStart {}

/// The program a command line runs, resolved on PATH as the shell would.
pub fn resolve_program(program: &OsStr) -> Result<PathBuf, CannotStart> {
    let name = Path::new(program);
    let candidates: Vec<PathBuf> = if name.components().count() > 1 {
        vec![name.to_path_buf()]
    } else {
        std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).map(|d| d.join(name)).collect())
            .unwrap_or_default()
    };
    let mut found_not_executable = None;
    for c in candidates {
        if c.is_file() {
            if is_executable(&c) {
                return Ok(c);
            }
            found_not_executable.get_or_insert(c);
        }
    }
    match found_not_executable {
        Some(p) => Err(CannotStart {
            message: format!("{}: permission denied (not executable)", p.display()),
            status: 126,
        }),
        None => Err(CannotStart { message: format!("{}: command not found", name.display()), status: 127 }),
    }
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata().is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

#[cfg(unix)]
pub fn supervise(command: &[OsString], opts: &Options) -> anyhow::Result<Outcome> {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGWINCH};
    use std::io::IsTerminal;
    use std::os::unix::process::ExitStatusExt;

    let (program, args) =
        command.split_first().context("no command given: assertscope run -- python train.py")?;
    let program_path = resolve_program(program)?;

    let package = Materialized::create()?;
    let report_dir = match &opts.report_dir {
        Some(d) => {
            std::fs::create_dir_all(d)
                .with_context(|| format!("creating the report directory {}", d.display()))?;
            d.clone()
        }
        None => {
            let d = package.path().join("reports");
            std::fs::create_dir(&d).context("creating the report directory")?;
            d
        }
    };
    package.install_start_up_hook()?;

    let mut cmd = Command::new(&program_path);
    cmd.args(args);
    // Keep argv[0] as the user typed it (tools print their own name from it).
    {
        use std::os::unix::process::CommandExt;
        cmd.arg0(program);
    }
    if opts.mode != GuardMode::Off || opts.cpu {
        cmd.env("PYTHONPATH", package.pythonpath());
        cmd.env(contract::env::REPORT_DIR, &report_dir);
    }
    if opts.mode != GuardMode::Off {
        cmd.env(contract::env::GUARD, "1");
        let [auto, sync, asynchronous] = contract::GUARD_MODES;
        let mode = match opts.mode {
            GuardMode::Sync => sync,
            GuardMode::Async => asynchronous,
            _ => auto,
        };
        cmd.env(contract::env::GUARD_MODE, mode);
    }
    if opts.cpu {
        cmd.env(contract::env::CPU, "1");
    }
    if opts.blocking {
        cmd.env("CUDA_LAUNCH_BLOCKING", "1");
        cmd.env("PYTORCH_USE_CUDA_DSA", "1");
    }

    let (lines_tx, lines_rx) = output::channel();
    // With a shared report directory the output's tail is kept there too, for `explain DIR`.
    let tail = std::sync::Arc::new(std::sync::Mutex::new(output::Tail::new(OUTPUT_TAIL_BYTES)));
    let tee = output::TeeTail::new(lines_rx, tail.clone());
    let scanner = std::thread::spawn(move || log::scan(tee, "the run", None));

    let use_pty = opts.pty && std::io::stdout().is_terminal();
    let mut pumps = Vec::new();
    let mut pty_master = None;
    let mut child = if use_pty {
        let pty = pty::open()?;
        let out = pty.slave.try_clone()?;
        cmd.stdout(Stdio::from(out)).stderr(Stdio::from(pty.slave));
        let child = cmd.spawn().map_err(|e| spawn_error(&program_path, e))?;
        pty_master = Some(pty.master.try_clone()?);
        pumps.push(output::pump(pty.master, opts.sink, lines_tx.clone()));
        child
    } else {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| spawn_error(&program_path, e))?;
        pumps.push(output::pump(child.stdout.take().unwrap(), opts.sink, lines_tx.clone()));
        let err_sink = if opts.sink == Sink::Stdout { Sink::Stderr } else { opts.sink };
        pumps.push(output::pump(child.stderr.take().unwrap(), err_sink, lines_tx.clone()));
        child
    };
    drop(lines_tx);
    // The command above was built with our own file descriptors only; drop the pty's
    // copies held by `cmd` so the master sees EOF when the child exits.
    drop(cmd);

    // Signals: the terminal delivers Ctrl-C to the child itself (same process group);
    // anything sent to assertscope alone is passed on.
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH])?;
    let interactive = std::io::stdin().is_terminal();
    let pid = Pid::from_raw(child.id() as i32);

    // The child is waited for on its own thread, so its end is seen at once; this thread
    // handles signals and watches for guard reports meanwhile.
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let _ = done_tx.send(());
        status
    });
    let mut first_report_at: Option<Instant> = None;
    let mut stopped_after_report = false;
    let mut stop_sent: Option<Instant> = None;
    loop {
        match done_rx.recv_timeout(Duration::from_millis(50)) {
            Ok(()) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
        for sig in signals.pending() {
            match sig {
                SIGWINCH => {
                    if let Some(m) = &pty_master {
                        pty::resize_to_terminal(m);
                    }
                }
                SIGINT if interactive => {}
                other => {
                    if let Ok(s) = Signal::try_from(other) {
                        let _ = kill(pid, s);
                    }
                }
            }
        }
        // A guard report means a process failed; stop the command if it does not end on
        // its own, instead of letting other ranks wait for a collective to time out.
        if first_report_at.is_none() && has_report(&report_dir) {
            first_report_at = Some(Instant::now());
        }
        if let Some(t) = first_report_at {
            if stop_sent.is_none() && t.elapsed() >= opts.grace {
                let _ = kill(pid, Signal::SIGTERM);
                stop_sent = Some(Instant::now());
                stopped_after_report = true;
            } else if stop_sent.is_some_and(|s| s.elapsed() >= Duration::from_secs(10)) {
                let _ = kill(pid, Signal::SIGKILL);
            }
        }
    }
    let status = waiter.join().map_err(|_| anyhow::anyhow!("waiting for the command failed"))??;
    signals.handle().close();

    drop(pty_master);
    for p in pumps {
        let _ = p.join();
    }
    let scan = scanner.join().map_err(|_| anyhow::anyhow!("the log scanner panicked"))??;
    let reports = reports::read_dir(&report_dir)?;
    let python_processes = std::fs::read_to_string(report_dir.join("python-processes"))
        .map(|s| s.lines().filter(|l| !l.trim().is_empty()).count())
        .unwrap_or(0);
    if opts.report_dir.is_some() {
        let _ = std::fs::remove_file(report_dir.join("python-processes"));
        let kept = tail.lock().map(|t| t.contents()).unwrap_or_default();
        let path = report_dir.join(output_file_name());
        std::fs::write(&path, kept).with_context(|| format!("writing {}", path.display()))?;
    }
    let ended = match (status.code(), status.signal()) {
        (Some(c), _) => Ended::Exited(c),
        (None, Some(s)) => Ended::Signaled(s),
        (None, None) => Ended::Exited(1),
    };
    drop(package);
    Ok(Outcome { ended, scan, reports, python_processes, stopped_after_report })
}

#[cfg(not(unix))]
pub fn supervise(_command: &[OsString], _opts: &Options) -> anyhow::Result<Outcome> {
    anyhow::bail!("assertscope run needs a Unix system (Linux or macOS); on Windows use `import assertscope; assertscope.guard()` in the script")
}

/// How much of the command's output `--report-dir` keeps.
const OUTPUT_TAIL_BYTES: usize = 16 << 20;

/// `output-rank3-node07-4242.log`: the rank (when a launcher set one for this process,
/// as srun does), the host and the pid, so that `explain DIR` can tell the files apart.
fn output_file_name() -> String {
    let rank = contract::rank();
    let host = contract::file_name_host(
        &nix::unistd::gethostname().ok().and_then(|h| h.into_string().ok()).unwrap_or_default(),
    );
    let pid = std::process::id();
    match rank {
        Some(r) => format!("output-rank{r}-{host}-{pid}.log"),
        None => format!("output-{host}-{pid}.log"),
    }
}

fn has_report(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .is_ok_and(|mut entries| entries.any(|e| e.is_ok_and(|e| reports::is_report_file(&e.path()))))
}

fn spawn_error(program: &Path, e: std::io::Error) -> anyhow::Error {
    let status = match e.kind() {
        std::io::ErrorKind::NotFound => 127,
        _ => 126,
    };
    CannotStart { message: format!("{}: cannot start: {e}", program.display()), status }.into()
}
