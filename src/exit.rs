//! Exit statuses shared by the subcommands (DESIGN.md), named for what they mean to each.

/// `explain`, `run`: a diagnosis was made.
pub const DIAGNOSED: u8 = 0;
/// `explain`: no error found in the input.
pub const NO_ERROR_FOUND: u8 = 1;
/// `check`, `scan`, `lint`: no problem found; `doctor`: the environment can be guarded;
/// `rules`: the page was shown.
pub const OK: u8 = 0;
/// `check`, `scan`, `lint`: problems found; `doctor`: torch cannot be imported.
pub const PROBLEMS_FOUND: u8 = 1;
/// Bad usage or unreadable input.
pub const USAGE: u8 = 2;
