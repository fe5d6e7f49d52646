//! The streaming accumulator every reader feeds: a dense class histogram on the hot
//! path, and counts plus the first few positions of everything unusual on the cold one.
//!
//! A reader works on a *unit* (a file, or a byte range / row range / row group of one)
//! and numbers rows from the start of its unit. [`Stats::merge`] joins the results of
//! adjacent units in order and shifts the later unit's positions by the rows and lines
//! the earlier one saw in the same file, so units can run in any order on any thread and
//! still report absolute row numbers.
//!
//! [`Stats`] (in `accumulator`) is fed through [`Bounds`] (`bounds`), keeps its
//! [`Examples`] of where things were seen (`examples`) and its cold-path counts in [`Rare`]
//! (`rare`); [`IntValue`] and [`AsF64`] (`values`) are the element types it takes.

mod accumulator;
mod bounds;
mod examples;
mod rare;
mod values;

pub use accumulator::Stats;
pub use bounds::Bounds;
pub use examples::{Example, Examples, FileRows, Pos, Sample, KEEP};
pub use rare::{Lengths, Outside, Rare, RowPatterns};
pub use values::{AsF64, IntValue};
