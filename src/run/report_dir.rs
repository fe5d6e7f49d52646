//! A `--report-dir` shared by the `run`s of one job on several nodes (one `run` per node,
//! or per Slurm task). Each `run` reads the reports of its run id only, so that reports an
//! earlier job left in a reused directory are never taken for this job's; the `run`s of one
//! job must therefore share an id, so that each sees the others' reports: the first rank that
//! failed on any node is the root of every node's diagnosis, and a node whose ranks only wait
//! for it is stopped after `--grace` instead of at the collective's timeout.
//!
//! The id is `ASSERTSCOPE_RUN_ID` when set; else, with a shared directory, one the launcher
//! gives every node of a job alike: Slurm's job and step ids, or torchrun's `--rdzv-id`
//! (which names one job, unlike its endpoint, which later jobs reuse); else a fresh one.

use super::command;
use anyhow::Context;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

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

/// This run's id (see the module's documentation); `shared` when `--report-dir` was given.
pub fn run_id(command_line: &[OsString], shared: bool) -> std::io::Result<String> {
    if shared && std::env::var_os(command::RUN_ID_VAR).is_none() {
        if let Some(id) = job_id(command_line, |name| std::env::var(name).ok()) {
            return Ok(id);
        }
    }
    command::run_id()
}

/// The id a launcher gives every node of one job, made safe for a file name.
fn job_id(command_line: &[OsString], env: impl Fn(&str) -> Option<String>) -> Option<String> {
    let slurm = env("SLURM_JOB_ID").filter(|j| !j.trim().is_empty()).map(|job| match env("SLURM_STEP_ID") {
        Some(step) if !step.trim().is_empty() => format!("slurm_{}.{}", job.trim(), step.trim()),
        _ => format!("slurm_{}", job.trim()),
    });
    let id = slurm.or_else(|| rdzv_id(command_line).map(|id| format!("rdzv_{id}")))?;
    let cleaned: String =
        id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' }).take(56).collect();
    Some(cleaned)
}

/// torchrun's `--rdzv-id` / `--rdzv_id` (also `python -m torch.distributed.run`), unless it
/// is torchrun's default `none`.
fn rdzv_id(command_line: &[OsString]) -> Option<String> {
    let words: Vec<String> = command_line.iter().map(|w| w.to_string_lossy().into_owned()).collect();
    let launcher = words.iter().any(|w| {
        let base = w.rsplit('/').next().unwrap_or(w);
        base == "torchrun" || w == "torch.distributed.run" || w == "torch.distributed.launch"
    });
    if !launcher {
        return None;
    }
    let mut it = words.iter();
    while let Some(word) = it.next() {
        for flag in ["--rdzv-id", "--rdzv_id"] {
            let value = if word == flag {
                it.next().cloned()
            } else {
                word.strip_prefix(flag).and_then(|rest| rest.strip_prefix('=')).map(str::to_string)
            };
            if let Some(v) = value.filter(|v| !v.is_empty() && v != "none") {
                return Some(v);
            }
        }
        // The training script's own arguments follow it; they are not torchrun's.
        if word.ends_with(".py") {
            break;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<OsString> {
        line.split_whitespace().map(OsString::from).collect()
    }

    #[test]
    fn torchrun_rendezvous_ids() {
        let none = |_: &str| None;
        let line = "torchrun --nnodes 2 --node_rank 1 --rdzv_id job-42 --rdzv_endpoint h:29500 train.py";
        assert_eq!(job_id(&words(line), none).as_deref(), Some("rdzv_job_42"));
        let line = "python -m torch.distributed.run --rdzv-id=exp.7 train.py --rdzv-id other";
        assert_eq!(job_id(&words(line), none).as_deref(), Some("rdzv_exp.7"));
        for line in [
            "torchrun --rdzv_id none train.py",
            "torchrun --nnodes 2 train.py --rdzv_id x",
            "python train.py --rdzv_id x",
        ] {
            assert_eq!(job_id(&words(line), none), None, "{line}");
        }
    }

    #[test]
    fn slurm_job_and_step() {
        let env = |name: &str| match name {
            "SLURM_JOB_ID" => Some("4411".to_string()),
            "SLURM_STEP_ID" => Some("0".to_string()),
            _ => None,
        };
        assert_eq!(job_id(&words("torchrun --rdzv_id x train.py"), env).as_deref(), Some("slurm_4411.0"));
    }
}
