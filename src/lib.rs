//! assertscope: from a PyTorch device-side assert to its root cause, user line and fix.
//!
//! The parts: [`kb`] (the knowledge base, data embedded from `kb/*.toml`), [`log`]
//! (streaming log parsing into events), [`diagnose`] (events to a [`report::Report`]),
//! [`render`] (human and JSON output) and [`commands`] (one module per subcommand).

// Unix is the supported platform: `run` is built on Unix processes, signals, pipes and
// pseudo-terminals, and half-compiled fallbacks would only pretend otherwise.
#[cfg(not(unix))]
compile_error!(
    "assertscope supports Unix systems (Linux, macOS) only: `run` needs Unix signals, pipes and \
     pseudo-terminals. On Windows use the Python package: `import assertscope; assertscope.guard()`."
);

pub mod check;
pub mod cli;
pub mod commands;
pub mod contract;
pub mod diagnose;
pub mod diagnostic;
pub mod exit;
pub mod guard_report;
pub mod kb;
pub mod lint;
pub mod log;
pub mod origin;
pub mod progress;
pub mod pyembed;
pub mod render;
pub mod report;
pub mod run;
