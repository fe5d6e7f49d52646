//! Parquet files: the footer is read once, then groups of row groups are decoded by
//! several threads, projected to the one column checked.

use super::arrow::{declared_classes, layout, nested_type, push, type_name};
use super::{open, pick_name, ColumnInfo, FilePlan, ReadCtx, ReadOptions, Unit, UnitEnd};
use crate::check::input::InputFile;
use crate::check::stats::Stats;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use std::path::PathBuf;
use std::sync::Arc;

const BATCH: usize = 64 * 1024;

pub fn plan(file: &InputFile, opts: &ReadOptions) -> anyhow::Result<FilePlan> {
    let meta = metadata(file)?;
    let schema = meta.schema().clone();
    let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let path: Vec<String> =
        opts.column.as_deref().map(|c| c.split('.').map(str::to_string).collect()).unwrap_or_default();
    let root = pick_name(file, "column", path.first().map(String::as_str), &names)?.to_string();
    let root_index = names.iter().position(|n| *n == root).expect("picked from the names");
    let nested: Vec<String> = path.iter().skip(1).cloned().collect();
    let data_type = nested_type(schema.field(root_index), &nested);
    let mut column =
        ColumnInfo::new(Some(path_name(&root, &nested)), type_name(&data_type), layout(&data_type));
    column.declared_classes = declared_classes(&schema, &root);

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

fn path_name(root: &str, nested: &[String]) -> String {
    std::iter::once(root).chain(nested.iter().map(String::as_str)).collect::<Vec<_>>().join(".")
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
        let mut rows = 0u64;
        for batch in reader {
            let batch =
                batch.map_err(|e| anyhow::anyhow!("{shown}: cannot decode row {rows} onwards: {e}"))?;
            push(stats, ctx.bounds, batch.column(0), &s.nested, rows)
                .map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
            rows += batch.num_rows() as u64;
        }
        Ok(UnitEnd { rows, lines: 0 })
    }
}
