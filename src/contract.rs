//! What the binary and the Python package it injects must agree on, defined once:
//! environment variable names, guard modes, the launcher variables a process's rank is
//! read from, how a host name becomes part of a file name, and the version of the file
//! `python -m assertscope.scan` writes. `python/assertscope/_contract.py` is the Python
//! copy; `tests/contract.rs` checks the two are equal, value by value and rule by rule.

/// Environment variables the binary sets for the processes it starts.
pub mod env {
    /// Directory the guard writes its reports to (one JSON file per failure).
    pub const REPORT_DIR: &str = "ASSERTSCOPE_REPORT_DIR";
    /// `1`: arm the guard as Python starts.
    pub const GUARD: &str = "ASSERTSCOPE_GUARD";
    /// One of [`super::GUARD_MODES`].
    pub const GUARD_MODE: &str = "ASSERTSCOPE_GUARD_MODE";
    /// `1`: run CUDA code on the CPU.
    pub const CPU: &str = "ASSERTSCOPE_CPU";
    /// Where `run` and `scan` put the injected package (read by the binary only).
    pub const TMPDIR: &str = "ASSERTSCOPE_TMPDIR";
    /// The run a guard report belongs to: `run` ignores reports of other runs in a reused
    /// report directory.
    pub const RUN_ID: &str = "ASSERTSCOPE_RUN_ID";
    /// Ray's variable naming a function that edits a job's runtime_env in `ray.init`: `run`
    /// points it at [`RAY_RUNTIME_ENV_HOOK`], so the workers of a Ray cluster get the guard.
    pub const RAY_RUNTIME_ENV: &str = "RAY_RUNTIME_ENV_HOOK";
    /// The user's own RAY_RUNTIME_ENV_HOOK, kept by `run`; the guard's hook runs it first.
    pub const RAY_HOOK: &str = "ASSERTSCOPE_RAY_HOOK";
}

/// Added to the run id of the reports of Ray workers: Ray ends or retries a job whose worker
/// failed, so `run` reads their reports but never stops the job for them.
pub const RAY_RUN_ID_SUFFIX: &str = ".ray";

/// The function Ray's RAY_RUNTIME_ENV_HOOK names, in the injected package.
pub const RAY_RUNTIME_ENV_HOOK: &str = "assertscope.ray.runtime_env_hook";

/// The guard's modes; the first is the default.
pub const GUARD_MODES: [&str; 3] = ["auto", "sync", "async"];

/// Variables launchers set to a process's global rank, local rank and world size, in order
/// of preference: torchrun / accelerate, Slurm, Open MPI, MPICH / Intel MPI.
pub const RANK_VARIABLES: [&str; 4] = ["RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"];
pub const LOCAL_RANK_VARIABLES: [&str; 4] =
    ["LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"];
pub const WORLD_SIZE_VARIABLES: [&str; 4] =
    ["WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"];

/// The `version` of the facts document `python -m assertscope.scan` writes (2: facts
/// per field, judged by the binary; 1 held findings decided in Python).
pub const SCAN_RESULT_VERSION: u64 = 2;

/// The first of `names` set to a non-negative integer.
pub fn env_number(names: &[&str]) -> Option<u32> {
    names.iter().find_map(|name| number(&std::env::var(name).ok()?))
}

/// A launcher variable's value as a number: digits only (no sign), blanks around ignored.
pub fn number(value: &str) -> Option<u32> {
    let value = value.trim();
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse().ok()
}

/// This process's rank, when a launcher set one.
pub fn rank() -> Option<u32> {
    env_number(&RANK_VARIABLES)
}

/// A host name as a file-name part: ASCII letters, digits, `-`, `_` and `.` kept, anything
/// else `_`; `host` when empty.
pub fn file_name_host(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' })
        .collect();
    if cleaned.is_empty() {
        "host".into()
    } else {
        cleaned
    }
}
