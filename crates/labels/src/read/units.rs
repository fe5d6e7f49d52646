//! What every reader is given (the options, the bounds, a progress callback) and gives
//! back: a [`FilePlan`] of [`Unit`]s that read their part into `Stats`, and the
//! [`ColumnInfo`] of what they read.

use crate::stats::{Bounds, Stats};

/// Whether the first line of a CSV/TSV/text file is a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Header {
    #[default]
    Auto,
    Yes,
    No,
}

#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Column name or 0-based index, JSON path (`a.b`), NPZ member or tensor name.
    pub column: Option<String>,
    pub header: Header,
    pub delimiter: Option<u8>,
    /// Units to aim for per big file (usually the number of threads).
    pub parallelism: usize,
}

pub struct ReadCtx<'a> {
    pub bounds: &'a Bounds,
    pub opts: &'a ReadOptions,
    /// Told the bytes a unit has read as it goes, for a progress line that moves within a
    /// large unit (a line-oriented file is read in blocks of a few MB).
    pub progress: Option<&'a (dyn Fn(u64) + Sync)>,
}

impl ReadCtx<'_> {
    /// `bytes` more of the unit were read.
    pub fn bytes_read(&self, bytes: usize) {
        if let Some(progress) = self.progress {
            progress(bytes as u64);
        }
    }
}

/// How the values of one row are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One value per row.
    Scalar,
    /// Several values per row: `Some(width)` for a fixed width (2-D arrays), `None` for
    /// lists of varying length.
    Rows(Option<u64>),
    /// Images: rows of pixels.
    Image,
}

/// What was read from a file: the column, its stored type and shape.
#[derive(Debug, Clone)]
pub struct ColumnInfo {
    /// The column, field, member or tensor name, when there is one.
    pub name: Option<String>,
    /// The stored type (`int64`, `float32`, `list<int32>`, `text`, ...).
    pub dtype: String,
    pub layout: Layout,
    /// The array shape, for array formats.
    pub shape: Option<Vec<u64>>,
    /// A number of classes the file itself declares (a Hugging Face `ClassLabel`).
    pub declared_classes: Option<i64>,
}

impl ColumnInfo {
    pub fn new(name: Option<String>, dtype: impl Into<String>, layout: Layout) -> ColumnInfo {
        ColumnInfo { name, dtype: dtype.into(), layout, shape: None, declared_classes: None }
    }

    /// Whether the stored type is a floating-point one.
    pub fn is_float_storage(&self) -> bool {
        let d = self.dtype.as_str();
        let inner = d.strip_prefix("list<").unwrap_or(d);
        inner.starts_with("float") || inner.starts_with("bfloat") || inner.starts_with("half")
    }
}

/// Rows and text lines a unit read.
#[derive(Debug, Clone, Copy, Default)]
pub struct UnitEnd {
    pub rows: u64,
    pub lines: u64,
}

pub trait Unit: Send + Sync {
    fn read(&self, ctx: &ReadCtx, stats: &mut Stats) -> anyhow::Result<UnitEnd>;
}

/// A unit could not read its part on its own (a quoted CSV field spanning lines, or a
/// malformed row whose absolute position it cannot know): the file must be read again
/// from the start by its sequential unit.
#[derive(Debug)]
pub struct NeedsSequential;

impl std::fmt::Display for NeedsSequential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("this part of the file must be read sequentially")
    }
}

impl std::error::Error for NeedsSequential {}

pub struct FilePlan {
    pub column: ColumnInfo,
    pub units: Vec<Box<dyn Unit>>,
    /// Reads the whole file alone, for exact positions when a parallel unit gave up.
    pub sequential: Option<Box<dyn Unit>>,
}

impl FilePlan {
    pub(super) fn single(column: ColumnInfo, unit: Box<dyn Unit>) -> FilePlan {
        FilePlan { column, units: vec![unit], sequential: None }
    }
}
