//! Readers: one module per file format. Each plans a file into *units* (byte ranges,
//! row ranges, row groups, or the whole file) that threads read independently into a
//! [`Stats`], numbering rows from the start of the unit.

mod array;
mod arrow;
mod csv;
pub mod guard;
mod header;
mod ipc;
mod jsonl;
pub mod lines;
mod npy;
mod npz;
mod parquet;
mod png;
mod positional;
mod safetensors;

pub use self::array::{DType, DTypeKind};
pub use self::npy::parse_header as parse_npy_header;

use super::input::{Format, InputFile};
use super::stats::{Bounds, Stats};

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
    fn single(column: ColumnInfo, unit: Box<dyn Unit>) -> FilePlan {
        FilePlan { column, units: vec![unit], sequential: None }
    }
}

/// Opens a file, reads its header or metadata, picks the column, and splits it into units.
/// Whatever a corrupt file does to a decoder, here or when a unit is read, ends in one
/// error naming the file ([`guard`]).
pub fn plan(file: &InputFile, opts: &ReadOptions) -> anyhow::Result<FilePlan> {
    let shown = file.display();
    let bytes = std::fs::metadata(&file.path).map_or(0, |m| m.len());
    let mut plan = guard::contain(&shown, file.format.name(), || {
        guard::with_deadline(bytes, || match file.format {
            Format::Csv | Format::Tsv | Format::Text => csv::plan(file, opts),
            Format::Jsonl => jsonl::plan(file, opts),
            Format::Parquet => parquet::plan(file, opts),
            Format::Arrow => ipc::plan(file, opts),
            Format::Npy => npy::plan(file, opts),
            Format::Npz => npz::plan(file, opts),
            Format::Safetensors => safetensors::plan(file, opts),
            Format::Png => png::plan(file),
        })
    })?;
    let guarded = |unit: Box<dyn Unit>| -> Box<dyn Unit> {
        Box::new(Guarded { unit, shown: shown.clone(), format: file.format.name(), bytes })
    };
    plan.units = std::mem::take(&mut plan.units).into_iter().map(guarded).collect();
    plan.sequential = plan.sequential.take().map(guarded);
    Ok(plan)
}

/// The number of rows (samples) in a file, read as cheaply as the format allows; used to
/// compare a features file with its labels.
pub fn count_rows(file: &InputFile, opts: &ReadOptions) -> anyhow::Result<u64> {
    let bytes = std::fs::metadata(&file.path).map_or(0, |m| m.len());
    guard::contain(&file.display(), file.format.name(), || {
        guard::with_deadline(bytes, || match file.format {
            Format::Csv | Format::Tsv | Format::Text => csv::count_rows(file, opts),
            Format::Jsonl => jsonl::count_rows(file, opts),
            Format::Parquet => parquet::count_rows(file),
            Format::Arrow => ipc::count_rows(file),
            Format::Npy => npy::count_rows(file),
            Format::Npz => npz::count_rows(file, opts),
            Format::Safetensors => safetensors::count_rows(file, opts),
            Format::Png => Ok(1),
        })
    })
}

/// A unit read inside the [`guard`] of its file, with the file's deadline.
struct Guarded {
    unit: Box<dyn Unit>,
    shown: String,
    format: &'static str,
    bytes: u64,
}

impl Unit for Guarded {
    fn read(&self, ctx: &ReadCtx, stats: &mut Stats) -> anyhow::Result<UnitEnd> {
        guard::contain(&self.shown, self.format, || {
            guard::with_deadline(self.bytes, || self.unit.read(ctx, stats))
        })
    }
}

/// Opens a file with a one-line error naming it.
fn open(file: &InputFile) -> anyhow::Result<std::fs::File> {
    std::fs::File::open(&file.path).map_err(|e| anyhow::anyhow!("{}: cannot open: {e}", file.display()))
}

/// "a, b, c" for an error message, shortened when long.
fn list_names<S: AsRef<str>>(names: &[S]) -> String {
    list_names_of(names, names.len())
}

/// "a, b, c, … (N in all)": the first of `total` names, of which `names` holds the first.
fn list_names_of<S: AsRef<str>>(names: &[S], total: usize) -> String {
    const SHOWN: usize = 30;
    let mut out = names.iter().take(SHOWN).map(|s| shorten(s.as_ref())).collect::<Vec<_>>().join(", ");
    if total > SHOWN {
        out.push_str(&format!(", … ({total} in all)"));
    }
    out
}

/// A name as an error message shows it: on one line, and cut when very long (a column
/// named by a corrupt file, or a whole line taken for a header).
fn shorten(name: &str) -> String {
    const MAX: usize = 60;
    let flat: String = name.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    match flat.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

/// Picks the one name the user asked for, or the only one there is.
fn pick_name<'a>(
    file: &InputFile,
    what: &str,
    asked: Option<&str>,
    names: &'a [String],
) -> anyhow::Result<&'a str> {
    match asked {
        Some(name) => names.iter().find(|n| n.as_str() == name).map(|s| s.as_str()).ok_or_else(|| {
            anyhow::anyhow!(
                "{}: no {what} `{}`; the file has: {}",
                file.display(),
                shorten(name),
                list_names(names)
            )
        }),
        None if names.len() == 1 => Ok(&names[0]),
        None if names.is_empty() => anyhow::bail!("{}: the file holds no {what}", file.display()),
        None => anyhow::bail!(
            "{}: pick a {what} with --column; the file has: {}",
            file.display(),
            list_names(names)
        ),
    }
}
