//! `run`, `scan` and `doctor` where they cannot work (Windows): the commands keep their
//! names, so that `assertscope run …` answers in one line what to do instead of clap's
//! "unrecognized subcommand".

use std::ffi::OsString;

/// Whatever was given; nothing is parsed, since nothing runs.
#[derive(Debug, clap::Args)]
pub struct UnixOnlyArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub rest: Vec<OsString>,
}

pub use UnixOnlyArgs as RunArgs;
pub use UnixOnlyArgs as ScanArgs;
pub use UnixOnlyArgs as DoctorArgs;

/// The one line: which command, why, and what works here instead.
pub fn refuse(command: &str) -> anyhow::Result<u8> {
    anyhow::bail!(
        "`assertscope {command}` needs Unix (Linux, macOS): it starts Python with the guard injected \
         through process groups, pseudo-terminals and private directories; here use the guard in \
         Python (`import assertscope; assertscope.guard()`), and explain, check and lint as anywhere"
    )
}
