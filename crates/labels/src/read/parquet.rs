//! Parquet files, read with parquet's own column reader: the footer is read once, the
//! one leaf column checked is found in the schema, then groups of row groups are decoded
//! by several threads straight from its values and definition/repetition levels, with no
//! Arrow arrays in between.
//!
//! Types are named as Arrow names them: from the Arrow schema a writer such as pyarrow
//! embeds (which knows fixed-size lists, dictionaries and durations), otherwise from the
//! Parquet schema's logical types.

use super::arrow::{resolve_column, type_name};
use super::{open, FilePlan, ReadCtx, ReadOptions, Unit, UnitEnd};
use crate::input::InputFile;
use crate::stats::{AsF64, Bounds, Pos, Stats};
use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};
use base64::Engine;
use parquet::basic::{ConvertedType, LogicalType, Repetition, Type as Physical};
use parquet::column::reader::{get_typed_column_reader, ColumnReaderImpl};
use parquet::data_type::{
    BoolType, ByteArrayType, DataType as ParquetType, DoubleType, FixedLenByteArray, FixedLenByteArrayType,
    FloatType, Int32Type, Int64Type,
};
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use parquet::file::properties::ReaderProperties;
use parquet::file::reader::RowGroupReader;
use parquet::file::serialized_reader::SerializedRowGroupReader;
use parquet::schema::types::Type;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Rows decoded at a time: all of a scalar column's, fewer for lists, whose rows can hold
/// thousands of values each.
const SCALAR_BATCH: usize = 64 * 1024;
const LIST_BATCH: usize = 4 * 1024;

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
    ParquetMetaDataReader::new()
        .parse_and_finish(&f)
        .map_err(|e| anyhow::anyhow!("{}: not a readable Parquet file: {e}", file.display()))
}

/// The file's schema as Arrow types, with its key-value metadata (where Hugging Face
/// `datasets` declares a `ClassLabel`).
fn arrow_schema_of(meta: &ParquetMetaData) -> Schema {
    let mut metadata: HashMap<String, String> = meta
        .file_metadata()
        .key_value_metadata()
        .into_iter()
        .flatten()
        .filter_map(|kv| Some((kv.key.clone(), kv.value.clone()?)))
        .collect();
    let embedded = metadata.remove("ARROW:schema").and_then(|encoded| embedded_schema(&encoded));
    let root = meta.file_metadata().schema_descr().root_schema();
    let fields: Vec<Field> = root
        .get_fields()
        .iter()
        .map(|parquet_field| {
            let name = parquet_field.name();
            // The embedded schema only names types; the structure is the Parquet schema's.
            let hinted = embedded.as_ref().and_then(|s| s.field_with_name(name).ok());
            match hinted {
                Some(field) => field.clone(),
                None => Field::new(name, arrow_type(parquet_field), true),
            }
        })
        .collect();
    if let Some(embedded) = &embedded {
        for (key, value) in embedded.metadata() {
            metadata.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
    Schema::new_with_metadata(fields, metadata)
}

/// The Arrow schema a writer stored under `ARROW:schema`: base64 of an IPC schema message.
/// One that cannot be read is ignored: the Parquet schema alone still names every type.
fn embedded_schema(encoded: &str) -> Option<Schema> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(encoded))
        .ok()?;
    let message = if bytes.len() > 8 && bytes[..4] == [0xff; 4] { &bytes[8..] } else { &bytes[..] };
    let message = arrow_ipc::root_as_message(message).ok()?;
    message.header_as_schema().map(arrow_ipc::convert::fb_to_schema)
}

/// The Arrow type a Parquet field reads as, following the Parquet format's rules for
/// logical and legacy converted types and for lists written before the LIST annotation.
fn arrow_type(t: &Type) -> DataType {
    let info = t.get_basic_info();
    let repeated = info.has_repetition() && info.repetition() == Repetition::REPEATED;
    let single = if t.is_primitive() { primitive_type(t) } else { group_type(t) };
    match single {
        // A repeated field outside a LIST group is a list of its values (legacy writers).
        single if repeated => DataType::List(Arc::new(Field::new(t.name(), single, false))),
        single => single,
    }
}

fn group_type(t: &Type) -> DataType {
    let info = t.get_basic_info();
    let is_list = matches!(info.logical_type(), Some(LogicalType::List))
        || info.converted_type() == ConvertedType::LIST;
    let is_map = matches!(info.logical_type(), Some(LogicalType::Map))
        || matches!(info.converted_type(), ConvertedType::MAP | ConvertedType::MAP_KEY_VALUE);
    match t.get_fields() {
        [repeated] if is_list => {
            let element = list_element(t, repeated);
            let nullable = element.get_basic_info().repetition() != Repetition::REQUIRED;
            let element_type =
                if element.is_primitive() { primitive_type(element) } else { group_type(element) };
            DataType::List(Arc::new(Field::new(element.name(), element_type, nullable)))
        }
        [entries] if is_map => {
            DataType::Map(Arc::new(Field::new(entries.name(), group_type(entries), false)), false)
        }
        fields => DataType::Struct(
            fields
                .iter()
                .map(|f| {
                    Field::new(
                        f.name(),
                        arrow_type(f),
                        f.get_basic_info().repetition() != Repetition::REQUIRED,
                    )
                })
                .collect::<Fields>(),
        ),
    }
}

/// The element of a LIST group whose one child is `repeated`: that child itself when it
/// is a value or a group of several fields (two-level lists), or the one field inside it
/// (three-level lists), per the format's backward-compatibility rules.
fn list_element<'a>(list: &Type, repeated: &'a Type) -> &'a Type {
    if repeated.is_primitive() {
        return repeated;
    }
    let legacy_name = repeated.name() == "array" || repeated.name() == format!("{}_tuple", list.name());
    match repeated.get_fields() {
        [element] if !legacy_name => element,
        _ => repeated,
    }
}

fn primitive_type(t: &Type) -> DataType {
    let info = t.get_basic_info();
    let logical = info.logical_type();
    let converted = info.converted_type();
    let decimal =
        || DataType::Decimal128(t.get_precision().clamp(1, 38) as u8, t.get_scale().clamp(0, 38) as i8);
    let unit = |u: &parquet::basic::TimeUnit| match u {
        parquet::basic::TimeUnit::MILLIS(_) => TimeUnit::Millisecond,
        parquet::basic::TimeUnit::MICROS(_) => TimeUnit::Microsecond,
        parquet::basic::TimeUnit::NANOS(_) => TimeUnit::Nanosecond,
    };
    match (t.get_physical_type(), logical) {
        (Physical::BOOLEAN, _) => DataType::Boolean,
        (Physical::INT32 | Physical::INT64, Some(LogicalType::Integer { bit_width, is_signed })) => {
            match (bit_width, is_signed) {
                (8, true) => DataType::Int8,
                (16, true) => DataType::Int16,
                (32, true) => DataType::Int32,
                (64, true) => DataType::Int64,
                (8, false) => DataType::UInt8,
                (16, false) => DataType::UInt16,
                (32, false) => DataType::UInt32,
                _ => DataType::UInt64,
            }
        }
        (_, Some(LogicalType::Decimal { .. })) => decimal(),
        (_, Some(LogicalType::Date)) => DataType::Date32,
        (Physical::INT32, Some(LogicalType::Time { unit: u, .. })) => DataType::Time32(unit(&u)),
        (_, Some(LogicalType::Time { unit: u, .. })) => DataType::Time64(unit(&u)),
        (_, Some(LogicalType::Timestamp { unit: u, .. })) => DataType::Timestamp(unit(&u), None),
        (_, Some(LogicalType::Unknown)) => DataType::Null,
        (Physical::FIXED_LEN_BYTE_ARRAY, Some(LogicalType::Float16)) => DataType::Float16,
        (Physical::BYTE_ARRAY, Some(LogicalType::String | LogicalType::Enum | LogicalType::Json)) => {
            DataType::Utf8
        }
        (Physical::INT32, _) => match converted {
            ConvertedType::INT_8 => DataType::Int8,
            ConvertedType::INT_16 => DataType::Int16,
            ConvertedType::UINT_8 => DataType::UInt8,
            ConvertedType::UINT_16 => DataType::UInt16,
            ConvertedType::UINT_32 => DataType::UInt32,
            ConvertedType::DECIMAL => decimal(),
            ConvertedType::DATE => DataType::Date32,
            ConvertedType::TIME_MILLIS => DataType::Time32(TimeUnit::Millisecond),
            _ => DataType::Int32,
        },
        (Physical::INT64, _) => match converted {
            ConvertedType::UINT_64 => DataType::UInt64,
            ConvertedType::DECIMAL => decimal(),
            ConvertedType::TIME_MICROS => DataType::Time64(TimeUnit::Microsecond),
            ConvertedType::TIMESTAMP_MILLIS => DataType::Timestamp(TimeUnit::Millisecond, None),
            ConvertedType::TIMESTAMP_MICROS => DataType::Timestamp(TimeUnit::Microsecond, None),
            _ => DataType::Int64,
        },
        (Physical::INT96, _) => DataType::Timestamp(TimeUnit::Nanosecond, None),
        (Physical::FLOAT, _) => DataType::Float32,
        (Physical::DOUBLE, _) => DataType::Float64,
        (Physical::BYTE_ARRAY, _) => match converted {
            ConvertedType::UTF8 | ConvertedType::ENUM | ConvertedType::JSON => DataType::Utf8,
            ConvertedType::DECIMAL => decimal(),
            _ => DataType::Binary,
        },
        (Physical::FIXED_LEN_BYTE_ARRAY, _) => match converted {
            ConvertedType::DECIMAL => decimal(),
            _ => DataType::FixedSizeBinary(t.get_type_length_or(0)),
        },
    }
}

/// Where the checked values are: one leaf column of the Parquet schema, how its levels
/// make rows, and how its stored values decode; or why they cannot be read.
struct Leaf {
    column: usize,
    shape: Shape,
    max_def: i16,
    decode: Decode,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// One value per row; a definition level below the maximum is a null.
    Scalar,
    /// A list per row. A definition level below `list_def` is a null row, equal to it an
    /// empty list; above it, an element (null below the maximum).
    List { list_def: i16 },
}

/// How the stored values become numbers or text: by physical type, with the signedness
/// and width the Arrow type gives.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Decode {
    Int32,
    UInt32,
    Int64,
    UInt64,
    Float16,
    Float32,
    Float64,
    Bool,
    Text,
}

impl Leaf {
    /// Finds the leaf below top-level field `root_index` at the dotted path `nested`. The
    /// error, when there is one, is reported when the column is read, as for any decoding
    /// error.
    fn find(
        meta: &ParquetMetaData,
        schema: &Schema,
        root_index: usize,
        nested: &[String],
    ) -> Result<Leaf, String> {
        let descr = meta.file_metadata().schema_descr();
        let root = &descr.root_schema().get_fields()[root_index];
        let mut arrow = schema.field(root_index).data_type().clone();
        let mut node: &Type = root;
        let mut path = vec![root.name().to_string()];
        let mut def = level_of(root);
        for key in nested {
            let DataType::Struct(fields) = &arrow else {
                return Err(format!(
                    "the column is {}, not a struct, so it has no field `{key}`",
                    type_name(&arrow)
                ));
            };
            let Some((_, field)) = fields.find(key) else {
                let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
                return Err(format!("no struct field `{key}`; the struct has: {}", names.join(", ")));
            };
            let child = node.is_group().then(|| node.get_fields().iter().find(|f| f.name() == key.as_str()));
            let Some(child) = child.flatten() else {
                return Err(format!("no struct field `{key}` in the Parquet schema"));
            };
            arrow = field.data_type().clone();
            node = child;
            path.push(key.clone());
            def += level_of(child);
        }
        let unsupported = |t: &DataType| {
            format!(
                "unsupported column type {}: check reads numbers, text and lists of numbers",
                type_name(t)
            )
        };
        let (leaf_node, shape, element_type) = match &arrow {
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
                let (leaf_node, list_def) = if node.is_primitive() {
                    // `repeated int32 ids`: the field is both the list and its values.
                    (node, def - 1)
                } else {
                    let [repeated] = node.get_fields() else { return Err(unsupported(&arrow)) };
                    let element = list_element(node, repeated);
                    let mut leaf_path = vec![repeated.name().to_string()];
                    if !std::ptr::eq(element, repeated.as_ref()) {
                        leaf_path.push(element.name().to_string());
                    }
                    path.extend(leaf_path);
                    (element, def)
                };
                let element_type = unwrap_dictionary(f.data_type());
                let numeric = !leaf_node.is_group()
                    && !matches!(element_type, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
                if !numeric || decode_of(element_type, leaf_node).is_none() {
                    return Err(format!(
                        "unsupported list element type {}: check reads lists of numbers",
                        type_name(f.data_type())
                    ));
                }
                (leaf_node, Shape::List { list_def }, element_type.clone())
            }
            other if node.is_primitive() && !repeated(node) => {
                (node, Shape::Scalar, unwrap_dictionary(other).clone())
            }
            other => return Err(unsupported(other)),
        };
        let Some(decode) = decode_of(&element_type, leaf_node) else { return Err(unsupported(&arrow)) };
        let column = descr
            .columns()
            .iter()
            .position(|c| c.path().parts() == path.as_slice())
            .ok_or_else(|| format!("no leaf column {} in the Parquet schema", path.join(".")))?;
        let max_def = descr.column(column).max_def_level();
        let max_rep = descr.column(column).max_rep_level();
        if max_rep != (shape != Shape::Scalar) as i16 {
            return Err(unsupported(&arrow));
        }
        Ok(Leaf { column, shape, max_def, decode })
    }
}

fn repeated(t: &Type) -> bool {
    let info = t.get_basic_info();
    info.has_repetition() && info.repetition() == Repetition::REPEATED
}

/// The definition level a field adds: one unless it is required.
fn level_of(t: &Type) -> i16 {
    let info = t.get_basic_info();
    (info.has_repetition() && info.repetition() != Repetition::REQUIRED) as i16
}

fn unwrap_dictionary(t: &DataType) -> &DataType {
    match t {
        DataType::Dictionary(_, value) => value,
        other => other,
    }
}

/// How values of Arrow type `t` stored as `leaf` decode, if check reads them.
fn decode_of(t: &DataType, leaf: &Type) -> Option<Decode> {
    if !leaf.is_primitive() {
        return None;
    }
    let decode = match (leaf.get_physical_type(), t) {
        (
            Physical::INT32,
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::UInt8 | DataType::UInt16,
        ) => Decode::Int32,
        (Physical::INT32, DataType::UInt32) => Decode::UInt32,
        (Physical::INT32, DataType::Null) => Decode::Int32,
        (Physical::INT64, DataType::Int64) => Decode::Int64,
        (Physical::INT64, DataType::UInt64) => Decode::UInt64,
        (Physical::FIXED_LEN_BYTE_ARRAY, DataType::Float16) if leaf.get_type_length_or(0) == 2 => {
            Decode::Float16
        }
        (Physical::FLOAT, DataType::Float32) => Decode::Float32,
        (Physical::DOUBLE, DataType::Float64) => Decode::Float64,
        (Physical::BOOLEAN, DataType::Boolean) => Decode::Bool,
        (Physical::BYTE_ARRAY, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) => Decode::Text,
        _ => return None,
    };
    Some(decode)
}

/// The stored length of a fixed-length byte array, without panicking on other types.
trait TypeLength {
    fn get_type_length_or(&self, default: i32) -> i32;
}

impl TypeLength for Type {
    fn get_type_length_or(&self, default: i32) -> i32 {
        match self {
            Type::PrimitiveType { type_length, .. } => *type_length,
            Type::GroupType { .. } => default,
        }
    }
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
        let props = Arc::new(ReaderProperties::builder().build());
        let mut rows = 0u64;
        for &group in &self.groups {
            let cannot = |rows: u64, e: parquet::errors::ParquetError| {
                anyhow::anyhow!("{shown}: cannot decode row {rows} onwards: {e}")
            };
            let reader =
                SerializedRowGroupReader::new(file.clone(), s.meta.row_group(group), None, props.clone())
                    .map_err(|e| cannot(rows, e))?;
            let column = reader.get_column_reader(leaf.column).map_err(|e| cannot(rows, e))?;
            let mut out = ColumnOut { stats, bounds: ctx.bounds, leaf, rows };
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
            let done = out.rows;
            rows = result.map_err(|e| cannot(done, e))?;
        }
        Ok(UnitEnd { rows, lines: 0 })
    }
}

/// Values as the stats take them: integers counted as ids, floats checked for whole numbers.
trait Value: Copy + Default + AsF64 {
    fn feed(stats: &mut Stats, values: &[Self], bounds: &Bounds, at: &dyn Fn(usize) -> Pos);
}

/// `Value` for each type, fed to the stats method named first.
macro_rules! fed_by {
    ($method:ident: $($t:ty),*) => {$(
        impl Value for $t {
            fn feed(stats: &mut Stats, values: &[Self], bounds: &Bounds, at: &dyn Fn(usize) -> Pos) {
                stats.$method(values, bounds, at)
            }
        }
    )*};
}
fed_by!(ints: i32, u32, i64, u64, bool);
fed_by!(floats: f32, f64);

/// The values to feed, from the values as stored: the stored slice itself where they are
/// the same type (no copy on the hot path), else converted into `scratch`.
trait Decoded<Stored>: Value {
    fn decoded<'a>(stored: &'a [Stored], scratch: &'a mut Vec<Self>) -> &'a [Self];
}

impl<T: Value> Decoded<T> for T {
    fn decoded<'a>(stored: &'a [T], _: &'a mut Vec<T>) -> &'a [T] {
        stored
    }
}

/// Unsigned columns are stored in the signed physical type of the same width.
impl Decoded<i32> for u32 {
    fn decoded<'a>(stored: &'a [i32], scratch: &'a mut Vec<u32>) -> &'a [u32] {
        scratch.clear();
        scratch.extend(stored.iter().map(|&v| v as u32));
        scratch
    }
}

impl Decoded<i64> for u64 {
    fn decoded<'a>(stored: &'a [i64], scratch: &'a mut Vec<u64>) -> &'a [u64] {
        scratch.clear();
        scratch.extend(stored.iter().map(|&v| v as u64));
        scratch
    }
}

/// Half floats are stored as two little-endian bytes.
impl Decoded<FixedLenByteArray> for f32 {
    fn decoded<'a>(stored: &'a [FixedLenByteArray], scratch: &'a mut Vec<f32>) -> &'a [f32] {
        scratch.clear();
        scratch.extend(stored.iter().map(|v| match v.data() {
            &[lo, hi] => half::f16::from_le_bytes([lo, hi]).to_f32(),
            _ => f32::NAN,
        }));
        scratch
    }
}

/// One row group's column being fed into the stats; `rows` counts the unit's rows so far.
struct ColumnOut<'a> {
    stats: &'a mut Stats,
    bounds: &'a Bounds,
    leaf: &'a Leaf,
    rows: u64,
}

/// A batch's levels: empty when the column has none of that kind.
#[derive(Default)]
struct Levels {
    def: Vec<i16>,
    rep: Vec<i16>,
}

impl Levels {
    fn clear(&mut self) {
        self.def.clear();
        self.rep.clear();
    }
}

impl ColumnOut<'_> {
    /// Reads the whole column chunk; returns the unit's row count after it.
    fn read<P: ParquetType, V: Decoded<P::T>>(
        &mut self,
        mut reader: ColumnReaderImpl<P>,
    ) -> parquet::errors::Result<u64> {
        let (mut levels, mut stored, mut scratch, mut row) =
            (Levels::default(), Vec::new(), Vec::new(), Vec::new());
        let Shape::List { list_def } = self.leaf.shape else {
            loop {
                levels.clear();
                stored.clear();
                let read = self.next_batch(&mut reader, SCALAR_BATCH, &mut levels, &mut stored)?;
                if read == 0 {
                    return Ok(self.rows);
                }
                self.scalars(&levels.def, V::decoded(&stored, &mut scratch), read);
                self.rows += read as u64;
            }
        };
        // A row's levels can end up in two batches: parquet counts a row as read only once
        // the next one starts, so the last row of a batch waits for the next batch (or the
        // end of the column chunk) before it is fed.
        loop {
            let read = self.next_batch(&mut reader, LIST_BATCH, &mut levels, &mut stored)?;
            let complete = match read {
                0 => levels.rep.len(),
                _ => levels.rep.iter().rposition(|&r| r == 0).unwrap_or(0),
            };
            if complete > 0 {
                let max_def = self.leaf.max_def;
                let stored_values = levels.def[..complete].iter().filter(|&&d| d == max_def).count();
                let values = V::decoded(&stored[..stored_values], &mut scratch);
                let rows =
                    self.lists(&levels.def[..complete], &levels.rep[..complete], list_def, values, &mut row);
                self.rows += rows;
                stored.drain(..stored_values);
                levels.def.drain(..complete);
                levels.rep.drain(..complete);
            }
            if read == 0 {
                return Ok(self.rows);
            }
        }
    }

    fn text(&mut self, mut reader: ColumnReaderImpl<ByteArrayType>) -> parquet::errors::Result<u64> {
        let (mut levels, mut stored) = (Levels::default(), Vec::new());
        loop {
            levels.clear();
            stored.clear();
            let read = self.next_batch(&mut reader, SCALAR_BATCH, &mut levels, &mut stored)?;
            if read == 0 {
                return Ok(self.rows);
            }
            let mut values = stored.iter();
            for i in 0..read {
                let at = Pos::row(self.rows + i as u64);
                match levels.def.get(i) {
                    Some(&d) if d < self.leaf.max_def => self.stats.null(at),
                    _ => match values.next() {
                        Some(v) => self.stats.text(v.data(), at),
                        None => self.stats.null(at),
                    },
                }
            }
            self.rows += read as u64;
        }
    }

    /// Decodes about `max` more rows, appending to `levels` and `stored`; returns how many
    /// levels were read (one per row for a scalar column), 0 at the end of the chunk.
    fn next_batch<P: ParquetType>(
        &self,
        reader: &mut ColumnReaderImpl<P>,
        max: usize,
        levels: &mut Levels,
        stored: &mut Vec<P::T>,
    ) -> parquet::errors::Result<usize> {
        let def = (self.leaf.max_def > 0).then_some(&mut levels.def);
        let rep = (self.leaf.shape != Shape::Scalar).then_some(&mut levels.rep);
        let (_, _, levels_read) = reader.read_records(max, def, rep, stored)?;
        Ok(levels_read)
    }

    /// One value per row; `def` is empty when the column cannot hold nulls.
    fn scalars<V: Value>(&mut self, def: &[i16], values: &[V], read: usize) {
        let base = self.rows;
        let (stats, bounds, max_def) = (&mut *self.stats, self.bounds, self.leaf.max_def);
        if def.is_empty() || values.len() == read {
            V::feed(stats, values, bounds, &|i| Pos::row(base + i as u64));
            return;
        }
        let (mut i, mut v) = (0, 0);
        while i < def.len() {
            if def[i] < max_def {
                stats.null(Pos::row(base + i as u64));
                i += 1;
                continue;
            }
            let start = i;
            while i < def.len() && def[i] == max_def {
                i += 1;
            }
            let run = &values[v..v + (i - start)];
            V::feed(stats, run, bounds, &|k| Pos::row(base + (start + k) as u64));
            v += run.len();
        }
    }

    /// A list per row; a row starts at each repetition level 0. Returns the rows fed.
    fn lists<V: Value>(
        &mut self,
        def: &[i16],
        rep: &[i16],
        list_def: i16,
        values: &[V],
        row_values: &mut Vec<V>,
    ) -> u64 {
        let (stats, bounds, max_def) = (&mut *self.stats, self.bounds, self.leaf.max_def);
        let mut row = self.rows;
        let (mut level, mut v) = (0, 0);
        while level < rep.len() {
            let end =
                level + 1 + rep[level + 1..].iter().position(|&r| r == 0).unwrap_or(rep.len() - level - 1);
            let at = Pos::row(row);
            let first_def = def.get(level).copied().unwrap_or(max_def);
            if first_def < list_def {
                stats.null(at);
            } else if first_def == list_def {
                stats.row_length(0, bounds, at);
            } else {
                let elements = end - level;
                let defs = def.get(level..end).unwrap_or(&[]);
                let has_nulls = defs.iter().any(|&d| d < max_def);
                let slice: &[V] = if has_nulls {
                    row_values.clear();
                    for &d in defs {
                        if d == max_def {
                            row_values.push(values[v]);
                            v += 1;
                        } else {
                            row_values.push(V::default());
                        }
                    }
                    row_values
                } else {
                    let s = &values[v..v + elements];
                    v += elements;
                    s
                };
                stats.row_length(elements as u64, bounds, at);
                if has_nulls {
                    for (i, &d) in defs.iter().enumerate() {
                        if d < max_def {
                            stats.null(Pos::at(row, i as u64));
                        } else {
                            V::feed(stats, &slice[i..i + 1], bounds, &|_| Pos::at(row, i as u64));
                        }
                    }
                } else {
                    V::feed(stats, slice, bounds, &|i| Pos::at(row, i as u64));
                }
                if bounds.row_patterns && elements > 1 {
                    stats.row_pattern(slice, at);
                }
            }
            row += 1;
            level = end;
        }
        row - self.rows
    }
}
