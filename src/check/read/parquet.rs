//! Parquet files: the footer is read once, then groups of row groups are decoded by
//! several threads, projected to the one column checked.

use super::arrow::{push_batches, resolve_column};
use super::{open, FilePlan, ReadCtx, ReadOptions, Unit, UnitEnd};
use crate::check::input::InputFile;
use crate::check::stats::Stats;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use std::path::PathBuf;
use std::sync::Arc;

const BATCH: usize = 64 * 1024;

pub fn plan(file: &InputFile, opts: &ReadOptions) -> anyhow::Result<FilePlan> {
    let meta = metadata(file)?;
    let resolved = resolve_column(file, meta.schema(), opts)?;
    let column = resolved.column;
    let (root_index, nested) = (resolved.root_index, resolved.nested);
    let groups: Vec<usize> = (0..meta.metadata().num_row_groups()).collect();
    let parts = groups.len().clamp(1, opts.parallelism.max(1) * 2);
    let per = groups.len().div_ceil(parts).max(1);
    let shared = Arc::new(Shared { path: file.path.clone(), meta, root_index, nested });
    let mut units: Vec<Box<dyn Unit>> = groups
        .chunks(per)
        .map(|c| Box::new(RowGroups { shared: shared.clone(), groups: c.to_vec() }) as Box<dyn Unit>)
        .collect();
    if units.is_empty() {
        units.push(Box::new(RowGroups { shared, groups: Vec::new() }));
    }
    Ok(FilePlan { column, units, sequential: None })
}

pub fn count_rows(file: &InputFile) -> anyhow::Result<u64> {
    Ok(metadata(file)?.metadata().file_metadata().num_rows().max(0) as u64)
}

fn metadata(file: &InputFile) -> anyhow::Result<ArrowReaderMetadata> {
    let f = open(file)?;
    ArrowReaderMetadata::load(&f, Default::default())
        .map_err(|e| anyhow::anyhow!("{}: not a readable Parquet file: {e}", file.display()))
}

struct Shared {
    path: PathBuf,
    meta: ArrowReaderMetadata,
    root_index: usize,
    nested: Vec<String>,
}

struct RowGroups {
    shared: Arc<Shared>,
    groups: Vec<usize>,
}

impl Unit for RowGroups {
    fn read(&self, ctx: &ReadCtx, stats: &mut Stats) -> anyhow::Result<UnitEnd> {
        let s = &*self.shared;
        let shown = s.path.display();
        if self.groups.is_empty() {
            return Ok(UnitEnd::default());
        }
        let f = std::fs::File::open(&s.path)?;
        let mask = ProjectionMask::roots(s.meta.parquet_schema(), [s.root_index]);
        let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(f, s.meta.clone())
            .with_projection(mask)
            .with_row_groups(self.groups.clone())
            .with_batch_size(BATCH)
            .build()
            .map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
        push_batches(stats, ctx.bounds, reader, &s.nested, &shown)
    }
}
