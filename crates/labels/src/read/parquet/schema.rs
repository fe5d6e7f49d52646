//! The Parquet schema read as Arrow types, and the one leaf column `check` reads found in
//! it: how its levels make rows, and how its stored values decode.

use super::super::arrow::type_name;
use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};
use base64::Engine;
use parquet::basic::{ConvertedType, LogicalType, Repetition, Type as Physical};
use parquet::file::metadata::ParquetMetaData;
use parquet::schema::types::Type;
use std::collections::HashMap;
use std::sync::Arc;

/// The file's schema as Arrow types, with its key-value metadata (where Hugging Face
/// `datasets` declares a `ClassLabel`).
pub(super) fn arrow_schema_of(meta: &ParquetMetaData) -> Schema {
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
    arrow_ipc::convert::try_fb_to_schema(message.header_as_schema()?).ok()
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
    let is_list = matches!(info.logical_type_ref(), Some(LogicalType::List))
        || info.converted_type() == ConvertedType::LIST;
    let is_map = matches!(info.logical_type_ref(), Some(LogicalType::Map))
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
    let logical = info.logical_type_ref();
    let converted = info.converted_type();
    let decimal =
        || DataType::Decimal128(t.get_precision().clamp(1, 38) as u8, t.get_scale().clamp(0, 38) as i8);
    let unit = |u: &parquet::basic::TimeUnit| match u {
        parquet::basic::TimeUnit::MILLIS => TimeUnit::Millisecond,
        parquet::basic::TimeUnit::MICROS => TimeUnit::Microsecond,
        parquet::basic::TimeUnit::NANOS => TimeUnit::Nanosecond,
    };
    match (t.get_physical_type(), logical) {
        (Physical::BOOLEAN, _) => DataType::Boolean,
        (Physical::INT32 | Physical::INT64, Some(LogicalType::Integer(int))) => {
            match (int.bit_width, int.is_signed) {
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
        (Physical::INT32, Some(LogicalType::Time(t))) => DataType::Time32(unit(&t.unit)),
        (_, Some(LogicalType::Time(t))) => DataType::Time64(unit(&t.unit)),
        (_, Some(LogicalType::Timestamp(t))) => DataType::Timestamp(unit(&t.unit), None),
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
pub(super) struct Leaf {
    pub column: usize,
    pub shape: Shape,
    pub max_def: i16,
    pub decode: Decode,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// One value per row; a definition level below the maximum is a null.
    Scalar,
    /// A list per row. A definition level below `list_def` is a null row, equal to it an
    /// empty list; above it, an element (null below the maximum).
    List { list_def: i16 },
}

/// How the stored values become numbers or text: by physical type, with the signedness
/// and width the Arrow type gives.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Decode {
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
    pub fn find(
        meta: &ParquetMetaData,
        schema: &Schema,
        root_index: usize,
        nested: &[String],
    ) -> Result<Leaf, String> {
        let descr = meta.file_metadata().schema_descr();
        let root = &descr.root_schema().get_fields()[root_index];
        let (arrow, node, mut path, def) =
            struct_field(root, schema.field(root_index).data_type().clone(), nested)?;
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

/// The field at the dotted path `nested` below the top-level field `root` (whose Arrow type
/// is `arrow`): its Arrow type, its Parquet node, the path of names to it and its
/// definition level.
fn struct_field<'a>(
    root: &'a Type,
    mut arrow: DataType,
    nested: &[String],
) -> Result<(DataType, &'a Type, Vec<String>, i16), String> {
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
    Ok((arrow, node, path, def))
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
