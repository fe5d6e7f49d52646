//! Arrow arrays (from Parquet and Arrow IPC files) into the stats: integer, float and
//! boolean columns, text columns, dictionaries, lists (token ids, one-hot rows) and
//! struct fields named by a dotted path.

use super::names::pick_name;
use super::units::{ColumnInfo, ReadOptions, UnitEnd};
use crate::input::InputFile;
use crate::stats::{Bounds, Pos, Stats};
use anyhow::bail;
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::RecordBatch;
use arrow_array::{make_array, Array, ArrayAccessor, ArrayRef, Float32Array, OffsetSizeTrait, UInt8Array};
use arrow_buffer::ArrowNativeType as _;
use arrow_data::transform::MutableArrayData;
use arrow_schema::ArrowError;
use arrow_schema::{DataType, Field, Schema};
use std::sync::Arc;

/// Feeds one column of a record batch whose first row is row `base` of the unit.
pub fn push(
    stats: &mut Stats,
    bounds: &Bounds,
    array: &ArrayRef,
    nested: &[String],
    base: u64,
) -> anyhow::Result<()> {
    let array = descend(array, nested)?;
    let at = |i: usize| Pos::row(base + i as u64);
    match array.data_type() {
        DataType::List(_) => list(stats, bounds, array.as_list::<i32>(), base),
        DataType::LargeList(_) => list(stats, bounds, array.as_list::<i64>(), base),
        DataType::FixedSizeList(_, width) => {
            let l = array.as_fixed_size_list();
            let w = *width as usize;
            let offsets: Vec<usize> = (0..=l.len()).map(|i| i * w).collect();
            rows(stats, bounds, l.values(), &offsets, l.nulls(), base)
        }
        _ => flat(stats, bounds, &array, &at),
    }
}

/// Follows a dotted path into struct columns.
fn descend(array: &ArrayRef, nested: &[String]) -> anyhow::Result<ArrayRef> {
    let mut current = array.clone();
    for key in nested {
        let DataType::Struct(fields) = current.data_type() else {
            bail!(
                "the column is {}, not a struct, so it has no field `{key}`",
                type_name(current.data_type())
            );
        };
        let Some((index, _)) = fields.find(key) else {
            let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
            bail!("no struct field `{key}`; the struct has: {}", names.join(", "));
        };
        current = current.as_struct().column(index).clone();
    }
    Ok(current)
}

/// Text values, one row each.
fn text<'a>(stats: &mut Stats, a: impl ArrayAccessor<Item = &'a str>, at: &dyn Fn(usize) -> Pos) {
    for i in 0..a.len() {
        if a.is_null(i) {
            stats.null(at(i));
        } else {
            stats.text(a.value(i).as_bytes(), at(i));
        }
    }
}

/// The array with dictionaries decoded and half floats widened, so that the readers
/// below see plain numbers or text. (Arrow's cast kernels would do it, at the cost of
/// building the arrow-cast crate for these two conversions.)
fn plain(array: &ArrayRef) -> Result<ArrayRef, ArrowError> {
    Ok(match array.data_type() {
        DataType::Dictionary(_, _) => {
            let dictionary = array.as_any_dictionary();
            let values = dictionary.values();
            let keys = dictionary_keys(array);
            let decoded = match decode_numbers_or_text(values, &keys) {
                Some(decoded) => decoded,
                None => {
                    let values_data = values.to_data();
                    let mut gathered = MutableArrayData::new(vec![&values_data], true, keys.len());
                    for key in &keys {
                        match *key {
                            Some(key) if key < values.len() => gathered.try_extend(0, key, key + 1)?,
                            _ => gathered.try_extend_nulls(1)?,
                        }
                    }
                    make_array(gathered.freeze())
                }
            };
            plain(&decoded)?
        }
        DataType::Float16 => Arc::new(
            array
                .as_primitive::<Float16Type>()
                .iter()
                .map(|v| v.map(|h| h.to_f32()))
                .collect::<Float32Array>(),
        ),
        _ => array.clone(),
    })
}

/// Each row's index into the dictionary, `None` for a null row. Typed loops, compiled
/// here: arrow-array's own (`normalized_keys`) run at the build's lower optimisation level.
fn dictionary_keys(array: &ArrayRef) -> Vec<Option<usize>> {
    macro_rules! keys_of {
        ($($key:ty),*) => {$(
            if let Some(d) = array.as_dictionary_opt::<$key>() {
                return d.keys().iter().map(|k| k.map(|k| k.as_usize())).collect();
            }
        )*};
    }
    keys_of!(Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type);
    unreachable!("a dictionary array with a key type Arrow does not allow: {}", array.data_type())
}

/// A dictionary of plain numbers or text, decoded row by row; `None` for any other
/// value type, which the caller copies through arrow-data instead.
fn decode_numbers_or_text(values: &ArrayRef, keys: &[Option<usize>]) -> Option<ArrayRef> {
    macro_rules! numbers {
        ($($value:ty),*) => {$(
            if values.data_type() == &<$value>::DATA_TYPE {
                let decoded: arrow_array::PrimitiveArray<$value> = gather(values.as_primitive::<$value>(), keys);
                return Some(Arc::new(decoded));
            }
        )*};
    }
    numbers!(
        Int8Type,
        Int16Type,
        Int32Type,
        Int64Type,
        UInt8Type,
        UInt16Type,
        UInt32Type,
        UInt64Type,
        Float16Type,
        Float32Type,
        Float64Type
    );
    match values.data_type() {
        DataType::Utf8 => {
            Some(Arc::new(gather::<_, arrow_array::StringArray>(values.as_string::<i32>(), keys)))
        }
        DataType::LargeUtf8 => {
            Some(Arc::new(gather::<_, arrow_array::LargeStringArray>(values.as_string::<i64>(), keys)))
        }
        _ => None,
    }
}

/// The dictionary's value for each key. A row whose key is past the dictionary's end reads
/// as null, as a null key does.
fn gather<A: ArrayAccessor, C: FromIterator<Option<A::Item>>>(values: A, keys: &[Option<usize>]) -> C {
    keys.iter()
        .map(|k| k.filter(|&k| k < values.len() && values.is_valid(k)).map(|k| values.value(k)))
        .collect()
}

/// Values with one row each.
fn flat(
    stats: &mut Stats,
    bounds: &Bounds,
    array: &ArrayRef,
    at: &dyn Fn(usize) -> Pos,
) -> anyhow::Result<()> {
    macro_rules! primitive {
        ($t:ty, $method:ident) => {{
            let a = array.as_primitive::<$t>();
            match a.nulls().filter(|n| n.null_count() > 0) {
                None => stats.$method(a.values(), bounds, at),
                Some(nulls) => {
                    for (i, &v) in a.values().iter().enumerate() {
                        if nulls.is_null(i) {
                            stats.null(at(i));
                        } else {
                            stats.$method(&[v], bounds, &|_| at(i));
                        }
                    }
                }
            }
        }};
    }
    match array.data_type() {
        DataType::Int8 => primitive!(Int8Type, ints),
        DataType::Int16 => primitive!(Int16Type, ints),
        DataType::Int32 => primitive!(Int32Type, ints),
        DataType::Int64 => primitive!(Int64Type, ints),
        DataType::UInt8 => primitive!(UInt8Type, ints),
        DataType::UInt16 => primitive!(UInt16Type, ints),
        DataType::UInt32 => primitive!(UInt32Type, ints),
        DataType::UInt64 => primitive!(UInt64Type, ints),
        DataType::Float32 => primitive!(Float32Type, floats),
        DataType::Float64 => primitive!(Float64Type, floats),
        DataType::Float16 | DataType::Dictionary(_, _) => flat(stats, bounds, &plain(array)?, at)?,
        DataType::Boolean => {
            let a = array.as_boolean();
            for i in 0..a.len() {
                if a.is_null(i) {
                    stats.null(at(i));
                } else {
                    stats.int(a.value(i) as i64, bounds, || at(i));
                }
            }
        }
        DataType::Utf8 => text(stats, array.as_string::<i32>(), at),
        DataType::LargeUtf8 => text(stats, array.as_string::<i64>(), at),
        DataType::Utf8View => text(stats, array.as_string_view(), at),
        DataType::Null => stats.nulls(array.len() as u64, |i| at(i as usize)),
        other => bail!(
            "unsupported column type {}: check reads numbers, text and lists of numbers",
            type_name(other)
        ),
    }
    Ok(())
}

fn list<O: OffsetSizeTrait>(
    stats: &mut Stats,
    bounds: &Bounds,
    l: &arrow_array::GenericListArray<O>,
    base: u64,
) -> anyhow::Result<()> {
    let offsets: Vec<usize> = l.value_offsets().iter().map(|o| o.as_usize()).collect();
    rows(stats, bounds, l.values(), &offsets, l.nulls(), base)
}

/// Rows of several values: `values[offsets[r]..offsets[r + 1]]` is row `r`.
fn rows(
    stats: &mut Stats,
    bounds: &Bounds,
    values: &ArrayRef,
    offsets: &[usize],
    nulls: Option<&arrow_buffer::NullBuffer>,
    base: u64,
) -> anyhow::Result<()> {
    let values = match plain(values)? {
        bools if bools.data_type() == &DataType::Boolean => {
            Arc::new(bools.as_boolean().iter().map(|v| v.map(u8::from)).collect::<UInt8Array>()) as ArrayRef
        }
        values => values,
    };
    macro_rules! each_row {
        ($t:ty, $method:ident) => {{
            let vals = values.as_primitive::<$t>();
            let child_nulls = vals.nulls().filter(|n| n.null_count() > 0);
            let raw = vals.values();
            for r in 0..offsets.len().saturating_sub(1) {
                let row = base + r as u64;
                if nulls.is_some_and(|n| n.is_null(r)) {
                    stats.null(Pos::row(row));
                    continue;
                }
                let (s, e) = (offsets[r], offsets[r + 1]);
                let slice = &raw[s..e];
                stats.row_length(slice.len() as u64, bounds, Pos::row(row));
                match child_nulls {
                    None => stats.$method(slice, bounds, &|i| Pos::at(row, i as u64)),
                    Some(cn) => {
                        for (i, v) in slice.iter().enumerate() {
                            if cn.is_null(s + i) {
                                stats.null(Pos::at(row, i as u64));
                            } else {
                                stats.$method(std::slice::from_ref(v), bounds, &|_| Pos::at(row, i as u64));
                            }
                        }
                    }
                }
                if bounds.row_patterns && slice.len() > 1 {
                    stats.row_pattern(slice, Pos::row(row));
                }
            }
        }};
    }
    match values.data_type() {
        DataType::Int8 => each_row!(Int8Type, ints),
        DataType::Int16 => each_row!(Int16Type, ints),
        DataType::Int32 => each_row!(Int32Type, ints),
        DataType::Int64 => each_row!(Int64Type, ints),
        DataType::UInt8 => each_row!(UInt8Type, ints),
        DataType::UInt16 => each_row!(UInt16Type, ints),
        DataType::UInt32 => each_row!(UInt32Type, ints),
        DataType::UInt64 => each_row!(UInt64Type, ints),
        DataType::Float32 => each_row!(Float32Type, floats),
        DataType::Float64 => each_row!(Float64Type, floats),
        other => bail!("unsupported list element type {}: check reads lists of numbers", type_name(other)),
    }
    Ok(())
}

/// A short, NumPy-like name for an Arrow type; deep or wide nesting is cut with `…`.
pub fn type_name(t: &DataType) -> String {
    type_name_within(t, 4)
}

fn type_name_within(t: &DataType, depth: usize) -> String {
    const FIELDS_SHOWN: usize = 8;
    if depth == 0 && t.is_nested() {
        return "…".into();
    }
    let inner = |t: &DataType| type_name_within(t, depth - 1);
    match t {
        DataType::Int8 => "int8".into(),
        DataType::Int16 => "int16".into(),
        DataType::Int32 => "int32".into(),
        DataType::Int64 => "int64".into(),
        DataType::UInt8 => "uint8".into(),
        DataType::UInt16 => "uint16".into(),
        DataType::UInt32 => "uint32".into(),
        DataType::UInt64 => "uint64".into(),
        DataType::Float16 => "float16".into(),
        DataType::Float32 => "float32".into(),
        DataType::Float64 => "float64".into(),
        DataType::Boolean => "bool".into(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "text".into(),
        DataType::List(f) | DataType::LargeList(f) => format!("list<{}>", inner(f.data_type())),
        DataType::FixedSizeList(f, n) => format!("list<{}>[{n}]", inner(f.data_type())),
        DataType::Dictionary(_, v) => type_name_within(v, depth),
        DataType::Struct(fields) => {
            let mut shown: Vec<String> = fields
                .iter()
                .take(FIELDS_SHOWN)
                .map(|f| format!("{}: {}", super::names::shorten(f.name()), inner(f.data_type())))
                .collect();
            if fields.len() > FIELDS_SHOWN {
                shown.push(format!("… ({} fields)", fields.len()));
            }
            format!("struct<{}>", shown.join(", "))
        }
        DataType::Map(_, _) | DataType::Union(_, _) | DataType::RunEndEncoded(_, _) => {
            let full = t.to_string();
            super::names::shorten(&full)
        }
        other => other.to_string(),
    }
}

/// The type at a dotted path below a top-level field.
pub fn nested_type(field: &Field, nested: &[String]) -> DataType {
    let mut t = field.data_type().clone();
    for key in nested {
        let DataType::Struct(fields) = &t else { break };
        match fields.find(key) {
            Some((_, f)) => t = f.data_type().clone(),
            None => break,
        }
    }
    t
}

/// The layout of values of this type.
pub fn layout(t: &DataType) -> crate::read::units::Layout {
    use crate::read::units::Layout;
    match t {
        DataType::List(_) | DataType::LargeList(_) => Layout::Rows(None),
        DataType::FixedSizeList(_, n) => Layout::Rows(Some(*n as u64)),
        _ => Layout::Scalar,
    }
}

/// The number of classes a Hugging Face `ClassLabel` feature declares in the schema
/// metadata (`huggingface` key), for the column `name`.
pub fn declared_classes(schema: &Schema, name: &str) -> Option<i64> {
    let meta = schema.metadata().get("huggingface")?;
    let info: serde_json::Value = serde_json::from_str(meta).ok()?;
    let feature = info.get("info")?.get("features")?.get(name)?;
    let class_label = |f: &serde_json::Value| {
        (f.get("_type")?.as_str()? == "ClassLabel")
            .then(|| f.get("names")?.as_array().map(|n| n.len() as i64))?
    };
    class_label(feature).or_else(|| class_label(feature.get("feature")?))
}

/// The column `--column` names (`root` or `root.field.field`) in a schema.
pub struct Resolved {
    pub column: ColumnInfo,
    pub root_index: usize,
    pub nested: Vec<String>,
}

pub fn resolve_column(file: &InputFile, schema: &Schema, opts: &ReadOptions) -> anyhow::Result<Resolved> {
    let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let path: Vec<String> =
        opts.column.as_deref().map(|c| c.split('.').map(str::to_string).collect()).unwrap_or_default();
    let root = pick_name(file, "column", path.first().map(String::as_str), &names)?.to_string();
    let root_index = names.iter().position(|n| *n == root).expect("picked from the names");
    let nested: Vec<String> = path.iter().skip(1).cloned().collect();
    let data_type = nested_type(schema.field(root_index), &nested);
    let shown =
        std::iter::once(root.as_str()).chain(nested.iter().map(String::as_str)).collect::<Vec<_>>().join(".");
    let mut column = ColumnInfo::new(Some(shown), type_name(&data_type), layout(&data_type));
    column.declared_classes = declared_classes(schema, &root);
    Ok(Resolved { column, root_index, nested })
}

/// Feeds the first column of every batch, numbering rows from the first batch.
pub fn push_batches(
    stats: &mut Stats,
    bounds: &Bounds,
    batches: impl Iterator<Item = Result<RecordBatch, ArrowError>>,
    nested: &[String],
    shown: &dyn std::fmt::Display,
) -> anyhow::Result<UnitEnd> {
    let mut rows = 0u64;
    for batch in batches {
        let batch = batch.map_err(|e| anyhow::anyhow!("{shown}: cannot decode row {rows} onwards: {e}"))?;
        crate::read::guard::on_time().map_err(|e| anyhow::anyhow!("{shown}: at row {rows}: {e}"))?;
        push(stats, bounds, batch.column(0), nested, rows).map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
        rows += batch.num_rows() as u64;
    }
    Ok(UnitEnd { rows, lines: 0 })
}
