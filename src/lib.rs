//! assertscope: from a PyTorch device-side assert to its root cause, user line and fix.
//!
//! The parts: [`kb`] (the knowledge base, data embedded from `kb/*.toml`) and [`log`]
//! (streaming log parsing into events), both from the crate `assertscope-logs`;
//! [`diagnose`] (events to a [`report::Report`]), [`render`] (human and JSON output) and
//! [`commands`] (one module per subcommand).

pub use assertscope_logs::{kb, log};
// Lint is the crate `assertscope-lint`; what it shows a person is drawn here (`lint_render`).
/// The one finding model and its text renderer (`crates/diag`).
pub use assertscope_diag as diagnostic;
pub use assertscope_lint as lint;

pub mod check;
pub mod cli;
pub mod commands;
pub mod contract;
pub mod diagnose;
pub mod exit;
pub mod guard_report;
pub mod lint_render;
pub mod origin;
pub mod progress;
// `run` and what injects the guard into a child (`scan`, `doctor`) are built on Unix
// processes, signals, pipes, pseudo-terminals and private directories; elsewhere those
// commands say so in one line (`commands::unix_only`) and the rest works as on Unix.
#[cfg(unix)]
pub mod pyembed;
pub mod render;
pub mod report;
#[cfg(unix)]
pub mod run;
