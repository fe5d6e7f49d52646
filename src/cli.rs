//! Command-line interface: one subcommand per part of assertscope.

use crate::commands;
use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "assertscope",
    version,
    about = "Find the root cause of PyTorch's 'CUDA error: device-side assert triggered'",
    long_about = "Find the root cause of PyTorch's 'CUDA error: device-side assert triggered': \
                  the op, your source line, the offending values and the fix.",
    propagate_version = true,
    arg_required_else_help = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Explain a crash log: root cause, your line, the values, the fix
    Explain(commands::explain::ExplainArgs),
    /// Run a training command with the guard injected and diagnose a crash
    Run(commands::run::RunArgs),
    /// Check label/target data files against the number of classes or the vocabulary
    Check(commands::check::CheckArgs),
    /// Iterate a Dataset or DataLoader and check every batch
    Scan(commands::scan::ScanArgs),
    /// Check training code for the classic causes of device-side asserts
    Lint(commands::lint::LintArgs),
    /// Trace a guard report's bad value back to the line that made it
    Origin(commands::origin::OriginArgs),
    /// Report the Python, PyTorch, CUDA and GPU environment
    Doctor(commands::doctor::DoctorArgs),
    /// List every known cause and lint rule, or explain one (like `rustc --explain`)
    Rules(commands::rules::RulesArgs),
}

impl Command {
    /// Runs the command; the result is the process exit status.
    pub fn execute(self) -> anyhow::Result<u8> {
        match self {
            Command::Explain(args) => commands::explain::execute(args),
            #[cfg(unix)]
            Command::Run(args) => commands::run::execute(args),
            #[cfg(unix)]
            Command::Scan(args) => commands::scan::execute(args),
            Command::Origin(args) => commands::origin::execute(args),
            #[cfg(unix)]
            Command::Doctor(args) => commands::doctor::execute(args),
            #[cfg(not(unix))]
            Command::Run(_) => commands::unix_only::refuse("run"),
            #[cfg(not(unix))]
            Command::Scan(_) => commands::unix_only::refuse("scan"),
            #[cfg(not(unix))]
            Command::Doctor(_) => commands::unix_only::refuse("doctor"),
            Command::Check(args) => commands::check::execute(args),
            Command::Lint(args) => commands::lint::execute(args),
            Command::Rules(args) => commands::rules::execute(args),
        }
    }
}
