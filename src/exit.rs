//! Exit statuses shared by the subcommands (DESIGN.md).

/// A diagnosis was made (or, for `check`/`lint`, the input is clean).
pub const DIAGNOSED: u8 = 0;
/// No error found (`explain`), or problems found (`check`, `lint`).
pub const NOT_FOUND: u8 = 1;
/// Bad usage or unreadable input.
pub const USAGE: u8 = 2;
