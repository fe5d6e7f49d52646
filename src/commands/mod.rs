//! One module per subcommand; each exposes its clap `Args` and `execute`.

pub mod check;
#[cfg(unix)]
pub mod doctor;
pub mod explain;
pub mod lint;
pub mod origin;
pub mod rules;
#[cfg(unix)]
pub mod run;
#[cfg(unix)]
pub mod scan;
#[cfg(not(unix))]
pub mod unix_only;
#[cfg(not(unix))]
pub use unix_only as run;
#[cfg(not(unix))]
pub use unix_only as scan;
#[cfg(not(unix))]
pub use unix_only as doctor;
