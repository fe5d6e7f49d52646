//! Label, target and token-id data at rest, read into statistics: the file formats
//! training data is kept in (CSV, TSV, JSON Lines, Parquet, Arrow IPC, NumPy `.npy` and
//! `.npz`, safetensors, PNG masks), and the streaming accumulator they feed.
//!
//! [`input`] resolves paths, globs and directories; [`read`] plans each file into units
//! that threads read into [`stats::Stats`]. What the statistics mean for a loss or an
//! embedding is decided by `assertscope check`, which owns this crate's only caller.
//!
//! It is a crate of its own because its loops run over every value of a file that may
//! hold billions: it is built fully optimised, while the rest of assertscope, which runs
//! once per command, is optimised for size and builds faster.

pub mod input;
pub mod read;
pub mod stats;
