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
mod names;
mod npy;
mod npz;
mod parquet;
mod png;
mod positional;
mod safetensors;
mod units;

pub use self::array::{DType, DTypeKind};
pub use self::npy::parse_header as parse_npy_header;
pub use self::units::{
    ColumnInfo, FilePlan, Header, Layout, NeedsSequential, ReadCtx, ReadOptions, Unit, UnitEnd,
};

use super::input::{Format, InputFile};
use super::stats::Stats;

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
