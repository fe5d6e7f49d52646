//! Parquet files, read with parquet's own column reader: the footer is read once, the
//! one leaf column checked is found in the schema, then groups of row groups are decoded
//! by several threads straight from its values and definition/repetition levels, with no
//! Arrow arrays in between.
//!
//! Types are named as Arrow names them: from the Arrow schema a writer such as pyarrow
//! embeds (which knows fixed-size lists, dictionaries and durations), otherwise from the
//! Parquet schema's logical types.

mod claims;
mod decode;
mod schema;
mod thrift;

use self::decode::ColumnOut;
use self::schema::{arrow_schema_of, Decode, Leaf};
use super::arrow::resolve_column;
use super::names::open;
use super::units::{FilePlan, ReadCtx, ReadOptions, Unit, UnitEnd};
use crate::input::InputFile;
use crate::stats::Stats;
use parquet::column::reader::get_typed_column_reader;
use parquet::data_type::{
    BoolType, ByteArrayType, DoubleType, FixedLenByteArrayType, FloatType, Int32Type, Int64Type,
};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::properties::ReaderProperties;
use parquet::file::reader::RowGroupReader;
use parquet::file::serialized_reader::SerializedRowGroupReader;
use std::path::PathBuf;
use std::sync::Arc;

pub fn plan(file: &InputFile, opts: &ReadOptions) -> anyhow::Result<FilePlan> {
    let meta = Arc::new(metadata(file)?);
    let schema = arrow_schema_of(&meta);
    let resolved = resolve_column(file, &schema, opts)?;
    let leaf = Leaf::find(&meta, &schema, resolved.root_index, &resolved.nested);
    let groups: Vec<usize> = (0..meta.num_row_groups()).collect();
    let parts = groups.len().clamp(1, opts.parallelism.max(1) * 2);
    let per = groups.len().div_ceil(parts).max(1);
    let shared = Arc::new(Shared { path: file.path.clone(), meta, leaf });
    let mut units: Vec<Box<dyn Unit>> = groups
        .chunks(per)
        .map(|c| Box::new(RowGroups { shared: shared.clone(), groups: c.to_vec() }) as Box<dyn Unit>)
        .collect();
    if units.is_empty() {
        units.push(Box::new(RowGroups { shared, groups: Vec::new() }));
    }
    Ok(FilePlan { column: resolved.column, units, sequential: None })
}

pub fn count_rows(file: &InputFile) -> anyhow::Result<u64> {
    Ok(metadata(file)?.file_metadata().num_rows().max(0) as u64)
}

fn metadata(file: &InputFile) -> anyhow::Result<ParquetMetaData> {
    let f = open(file)?;
    let len = f.metadata()?.len();
    claims::read_metadata(&f, len)
        .map_err(|e| anyhow::anyhow!("{}: not a readable Parquet file: {e}", file.display()))
}

struct Shared {
    path: PathBuf,
    meta: Arc<ParquetMetaData>,
    leaf: Result<Leaf, String>,
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
        let leaf = s.leaf.as_ref().map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
        let file = Arc::new(std::fs::File::open(&s.path)?);
        let len = file.metadata()?.len();
        let props = Arc::new(ReaderProperties::builder().build());
        let mut rows = 0u64;
        for &group in &self.groups {
            let cannot = |rows: u64, e: &dyn std::fmt::Display| {
                anyhow::anyhow!("{shown}: cannot decode row {rows} onwards: {e}")
            };
            let chunk = s.meta.row_group(group).column(leaf.column);
            claims::check_column_chunk(&file, len, chunk).map_err(|e| cannot(rows, &e))?;
            let reader = SerializedRowGroupReader::new(
                file.clone(),
                s.meta.row_group(group),
                s.meta.page_index_for_row_group(group),
                props.clone(),
            )
            .map_err(|e| cannot(rows, &e))?;
            let column = reader.get_column_reader(leaf.column).map_err(|e| cannot(rows, &e))?;
            let mut out = ColumnOut::new(stats, ctx.bounds, leaf, rows);
            let result = match leaf.decode {
                Decode::Int32 => out.read::<Int32Type, i32>(get_typed_column_reader(column)),
                Decode::UInt32 => out.read::<Int32Type, u32>(get_typed_column_reader(column)),
                Decode::Int64 => out.read::<Int64Type, i64>(get_typed_column_reader(column)),
                Decode::UInt64 => out.read::<Int64Type, u64>(get_typed_column_reader(column)),
                Decode::Float32 => out.read::<FloatType, f32>(get_typed_column_reader(column)),
                Decode::Float64 => out.read::<DoubleType, f64>(get_typed_column_reader(column)),
                Decode::Bool => out.read::<BoolType, bool>(get_typed_column_reader(column)),
                Decode::Float16 => out.read::<FixedLenByteArrayType, f32>(get_typed_column_reader(column)),
                Decode::Text => out.text(get_typed_column_reader::<ByteArrayType>(column)),
            };
            let done = out.rows();
            rows = result.map_err(|e| cannot(done, &e))?;
        }
        Ok(UnitEnd { rows, lines: 0 })
    }
}
