//! One module per subcommand; each exposes its clap `Args` and `execute`.

pub mod check;
pub mod doctor;
pub mod explain;
pub mod lint;
pub mod origin;
pub mod rules;
pub mod run;
pub mod scan;
