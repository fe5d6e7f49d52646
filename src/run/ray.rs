//! Ray clusters: the workers of a cluster started on its own (`ray start --head`, then
//! `ray.init(address="auto")` in the job) are not children of `run`, so the environment it
//! gives the command never reaches them. Ray's RAY_RUNTIME_ENV_HOOK does: `ray.init` in the
//! driver passes the job's runtime_env through the function it names, and every worker of
//! the job, on every node, starts with that runtime_env. `run` points it at the injected
//! package's hook (`assertscope.ray.runtime_env_hook`), which adds the guard's variables,
//! the package and a worker setup hook; a hook the user had set is kept and run first.

use crate::contract::{self, env};
use std::process::Command;

/// Points Ray's runtime_env hook of the command at the guard's.
pub fn add_runtime_env_hook(cmd: &mut Command) {
    let theirs = std::env::var_os(env::RAY_RUNTIME_ENV)
        .filter(|h| !h.is_empty() && h.as_os_str() != contract::RAY_RUNTIME_ENV_HOOK);
    if let Some(theirs) = theirs {
        cmd.env(env::RAY_HOOK, theirs);
    }
    cmd.env(env::RAY_RUNTIME_ENV, contract::RAY_RUNTIME_ENV_HOOK);
}

/// The run id of this run's Ray workers' reports: collected with the others, never a
/// reason to stop the job (Ray ends or retries a job whose worker failed).
pub fn workers_run_id(run_id: &str) -> String {
    format!("{run_id}{}", contract::RAY_RUN_ID_SUFFIX)
}
