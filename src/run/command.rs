//! The child's command line and environment: the program resolved as `execvp` would,
//! and the variables that inject the guard.

use super::options::{GuardMode, Options};
use crate::contract;
use crate::pyembed::Materialized;
use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The search path `execvp` uses when PATH is unset (glibc's and the BSDs' `_CS_PATH`).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

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

/// The program a command line runs, resolved on PATH as the shell would (the default
/// search path when PATH is unset, as `env -i` leaves it).
pub fn resolve_program(program: &OsStr) -> Result<PathBuf, CannotStart> {
    let name = Path::new(program);
    let candidates: Vec<PathBuf> = if name.components().count() > 1 {
        vec![name.to_path_buf()]
    } else {
        let path = std::env::var_os("PATH").unwrap_or_else(|| DEFAULT_PATH.into());
        std::env::split_paths(&path).map(|d| d.join(name)).collect()
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
    use std::os::unix::fs::PermissionsExt;
    path.metadata().is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// The command with the guard's environment: the package first on PYTHONPATH, the mode,
/// where reports go and which run they belong to.
pub fn build(
    program_path: &Path,
    command: &[OsString],
    opts: &Options,
    package: &Materialized,
    report_dir: &Path,
    run_id: &str,
) -> Command {
    let mut cmd = Command::new(program_path);
    cmd.args(&command[1..]);
    // Keep argv[0] as the user typed it (tools print their own name from it).
    cmd.arg0(&command[0]);
    if opts.mode != GuardMode::Off || opts.cpu {
        cmd.env("PYTHONPATH", package.pythonpath());
        cmd.env(contract::env::REPORT_DIR, report_dir);
        cmd.env(RUN_ID_VAR, run_id);
        if let Ok(binary) = std::env::current_exe() {
            cmd.env(contract::env::BIN, binary);
        }
        super::ray::add_runtime_env_hook(&mut cmd);
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
    cmd
}

/// The variable naming the run a guard report belongs to. Set by `run` for its
/// command; set it yourself to the same value on every node of a multi-node job that
/// shares a `--report-dir`, so that each node's `run` sees the others' reports.
pub const RUN_ID_VAR: &str = crate::contract::env::RUN_ID;

/// This run's id: the inherited one (a multi-node job), else a fresh random one, so that
/// reports left in a reused `--report-dir` by earlier runs are never taken as this run's.
pub fn run_id() -> std::io::Result<String> {
    if let Some(id) = std::env::var(RUN_ID_VAR).ok().filter(|id| is_valid_run_id(id)) {
        return Ok(id);
    }
    let mut bytes = [0u8; 8];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut bytes)?;
    Ok(format!("{:016x}", u64::from_le_bytes(bytes)))
}

/// Run ids go into file names: letters, digits, `_` and `.` only (no `-`, which separates
/// the parts of a report's name).
fn is_valid_run_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_are_safe_in_file_names() {
        assert!(is_valid_run_id("12345"));
        assert!(is_valid_run_id("job_7.a"));
        assert!(!is_valid_run_id("a-b"));
        assert!(!is_valid_run_id("../x"));
        assert!(!is_valid_run_id(""));
    }
}
