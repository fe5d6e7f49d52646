//! What a Parquet file claims, checked before parquet acts on it: parquet builds the
//! schema by recursing once per nesting level, and reserves what a page header claims
//! (its uncompressed size, the number of dictionary values) before it decompresses or
//! decodes a byte. A corrupt file could claim gigabytes in a few bytes, or nest a schema
//! a million levels deep; checked here, it is refused with one line instead.

use super::thrift::{kind, Malformed, Reader};
use parquet::basic::{Compression, Type as Physical};
use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData, ParquetMetaDataReader};
use std::fs::File;

/// Nesting deeper than this is no label data (Arrow C++ stops at a few hundred levels).
const MAX_SCHEMA_DEPTH: usize = 128;
/// The largest page read; writers cut pages at about 1 MiB.
const MAX_PAGE_BYTES: i64 = 1 << 30;
/// A page header is read in steps of this much, more only when it holds large statistics.
const HEADER_STEP: usize = 16 << 10;

/// Reads the footer, checks how deeply its schema nests, and decodes it.
pub fn read_metadata(file: &File, len: u64) -> Result<ParquetMetaData, String> {
    if len < 12 {
        return Err(format!("{len} bytes is too short for a Parquet file (magic, footer length, magic)"));
    }
    let mut tail = [0u8; 8];
    read_at(file, &mut tail, len - 8)?;
    match &tail[4..] {
        b"PAR1" => {}
        b"PARE" => return Err("an encrypted Parquet file: decrypt it first".into()),
        _ => return Err("it does not end with the Parquet magic PAR1 (truncated?)".into()),
    }
    let footer_len = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    if footer_len + 12 > len {
        return Err(format!("the footer claims {footer_len} bytes but the file has {len} (truncated?)"));
    }
    let mut footer = vec![0u8; footer_len as usize];
    read_at(file, &mut footer, len - 8 - footer_len)?;
    let depth = schema_depth(&footer).map_err(|m| format!("corrupt footer: {}", describe(&m)))?;
    if depth > MAX_SCHEMA_DEPTH {
        return Err(format!("the schema nests fields {depth} levels deep, more than {MAX_SCHEMA_DEPTH}"));
    }
    ParquetMetaDataReader::decode_metadata(&footer).map_err(|e| e.to_string())
}

/// How deeply the schema of a `FileMetaData` (field 2: the schema's elements, depth
/// first, each group with its number of children in field 5) nests.
fn schema_depth(footer: &[u8]) -> Result<usize, Malformed> {
    let mut r = Reader::new(footer);
    let mut last = 0;
    while let Some(field) = r.field(last)? {
        last = field.id;
        if field.id != 2 || field.kind != kind::LIST {
            r.skip(field.kind)?;
            continue;
        }
        let (element, count) = r.list()?;
        if element != kind::STRUCT {
            return Err(Malformed::Invalid("the schema is not a list of elements"));
        }
        // Children still to come at each open level.
        let mut open: Vec<i64> = Vec::new();
        let mut deepest = 0;
        for _ in 0..count {
            let children = element_children(&mut r)?;
            if let Some(top) = open.last_mut() {
                *top -= 1;
            }
            if children > 0 {
                open.push(children);
                deepest = deepest.max(open.len());
                if deepest > MAX_SCHEMA_DEPTH {
                    return Ok(deepest);
                }
            }
            while open.last() == Some(&0) {
                open.pop();
            }
        }
        return Ok(deepest);
    }
    Ok(0)
}

/// The `num_children` of one `SchemaElement`, 0 for a leaf.
fn element_children(r: &mut Reader) -> Result<i64, Malformed> {
    let mut last = 0;
    let mut children = 0;
    while let Some(field) = r.field(last)? {
        last = field.id;
        if field.id == 5 && field.kind == kind::I32 {
            children = i64::from(r.i32()?.max(0));
        } else {
            r.skip(field.kind)?;
        }
    }
    Ok(children)
}

/// Walks the page headers of one column chunk, checking that it lies inside the file and
/// that no page claims more than its compressed bytes can hold.
pub fn check_column_chunk(file: &File, len: u64, column: &ColumnChunkMetaData) -> Result<(), String> {
    let start = column.dictionary_page_offset().unwrap_or_else(|| column.data_page_offset());
    let size = column.compressed_size();
    let end = start.checked_add(size).filter(|&e| start >= 0 && size >= 0 && e as u64 <= len);
    let Some(end) = end else {
        return Err(format!(
            "the column chunk claims bytes {start}..{} of a {len}-byte file",
            start.saturating_add(size)
        ));
    };
    let (start, end) = (start as u64, end as u64);
    let expands = max_expansion(column.compression());
    let value_bits =
        min_value_bits(column.column_descr().physical_type(), column.column_descr().type_length());
    let mut at = start;
    let mut buf = Vec::new();
    while at < end {
        let page = read_page_header(file, at, end, &mut buf)?;
        let body_end = at + page.header_len + page.compressed as u64;
        if page.compressed < 0 || page.uncompressed < 0 || body_end > end {
            return Err(format!(
                "the page at byte {at} claims {} bytes past its column chunk",
                page.compressed
            ));
        }
        if page.uncompressed > MAX_PAGE_BYTES
            || page.uncompressed > page.compressed.saturating_mul(expands) + 64
        {
            return Err(format!(
                "the page at byte {at} claims {} bytes uncompressed from {} compressed, more than {:?} can expand to",
                page.uncompressed,
                page.compressed,
                column.compression()
            ));
        }
        if let Some(values) = page.dictionary_values {
            if i128::from(values) * i128::from(value_bits) > i128::from(page.uncompressed) * 8 {
                return Err(format!(
                    "the dictionary page at byte {at} claims {values} values but holds {} bytes",
                    page.uncompressed
                ));
            }
        }
        at = body_end;
    }
    Ok(())
}

/// The sizes a page header claims.
struct PageHeader {
    header_len: u64,
    uncompressed: i64,
    compressed: i64,
    /// The number of values of a dictionary page.
    dictionary_values: Option<i64>,
}

/// Reads the page header at `at`, growing `buf` while the header is cut off.
fn read_page_header(file: &File, at: u64, end: u64, buf: &mut Vec<u8>) -> Result<PageHeader, String> {
    let mut want = HEADER_STEP;
    loop {
        let n = (end - at).min(want as u64) as usize;
        buf.resize(n, 0);
        read_at(file, buf, at)?;
        match parse_page_header(buf) {
            Ok(header) => return Ok(header),
            Err(Malformed::Truncated) if n < (end - at) as usize => want = want.saturating_mul(4),
            Err(m) => return Err(format!("corrupt page header at byte {at}: {}", describe(&m))),
        }
    }
}

fn parse_page_header(bytes: &[u8]) -> Result<PageHeader, Malformed> {
    let mut r = Reader::new(bytes);
    let (mut uncompressed, mut compressed, mut dictionary_values) = (None, None, None);
    let mut last = 0;
    while let Some(field) = r.field(last)? {
        last = field.id;
        match (field.id, field.kind) {
            (2, kind::I32) => uncompressed = Some(i64::from(r.i32()?)),
            (3, kind::I32) => compressed = Some(i64::from(r.i32()?)),
            (7, kind::STRUCT) => dictionary_values = Some(dictionary_num_values(&mut r)?),
            (_, other) => r.skip(other)?,
        }
    }
    let (Some(uncompressed), Some(compressed)) = (uncompressed, compressed) else {
        return Err(Malformed::Invalid("a page header without its sizes"));
    };
    Ok(PageHeader { header_len: r.position() as u64, uncompressed, compressed, dictionary_values })
}

fn dictionary_num_values(r: &mut Reader) -> Result<i64, Malformed> {
    let mut last = 0;
    let mut values = 0;
    while let Some(field) = r.field(last)? {
        last = field.id;
        if field.id == 1 && field.kind == kind::I32 {
            values = i64::from(r.i32()?);
        } else {
            r.skip(field.kind)?;
        }
    }
    Ok(values)
}

/// The most a compressed page can expand: from the formats' densest encodings (Snappy: a
/// 64-byte copy in 3 bytes; LZ4: 255 more bytes per length byte; deflate: 258 bytes in
/// two bits; Zstandard: a 128 KiB block in 4 bytes).
fn max_expansion(codec: Compression) -> i64 {
    match codec {
        Compression::UNCOMPRESSED => 1,
        Compression::SNAPPY => 24,
        Compression::LZ4 | Compression::LZ4_RAW => 256,
        Compression::GZIP(_) | Compression::LZO => 1040,
        Compression::ZSTD(_) | Compression::BROTLI(_) => 1 << 16,
    }
}

/// The fewest bits a plain-encoded value of this type takes: a dictionary of `n` values
/// needs `n` times this.
fn min_value_bits(physical: Physical, type_length: i32) -> i64 {
    match physical {
        Physical::BOOLEAN => 1,
        Physical::INT32 | Physical::FLOAT | Physical::BYTE_ARRAY => 32,
        Physical::INT64 | Physical::DOUBLE => 64,
        Physical::INT96 => 96,
        Physical::FIXED_LEN_BYTE_ARRAY => i64::from(type_length.max(1)) * 8,
    }
}

fn read_at(file: &File, buf: &mut [u8], offset: u64) -> Result<(), String> {
    super::super::positional::read_exact_at(file, buf, offset)
        .map_err(|e| format!("cannot read {} bytes at byte {offset}: {e}", buf.len()))
}

fn describe(m: &Malformed) -> &'static str {
    match m {
        Malformed::Truncated => "it ends inside a value",
        Malformed::Invalid(what) => what,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compact-protocol `FileMetaData` holding only a schema: a root group, then a chain
    /// of groups of one child each, `depth` deep, then one leaf.
    fn footer_with_chain(depth: usize) -> Vec<u8> {
        let mut b = vec![0x29, 0xfc];
        let elements = depth + 2;
        let mut n = elements as u64;
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                b.push(byte);
                break;
            }
            b.push(byte | 0x80);
        }
        for _ in 0..=depth {
            // { 4: name "a", 5: num_children 1 }
            b.extend_from_slice(&[0x48, 0x01, b'a', 0x15, 0x02, 0x00]);
        }
        // { 1: type INT64, 4: name "a" }
        b.extend_from_slice(&[0x15, 0x04, 0x38, 0x01, b'a', 0x00]);
        b.push(0x00);
        b
    }

    #[test]
    fn measures_the_schema_depth_without_recursing() {
        assert_eq!(schema_depth(&footer_with_chain(0)), Ok(1));
        assert_eq!(schema_depth(&footer_with_chain(9)), Ok(10));
        assert_eq!(schema_depth(&footer_with_chain(1_000_000)), Ok(MAX_SCHEMA_DEPTH + 1));
    }

    #[test]
    fn refuses_a_dictionary_page_claiming_more_values_than_bytes() {
        // { 1: DICTIONARY_PAGE, 2: 16, 3: 16, 7: { 1: 2^31 - 1 values } }
        let header =
            [0x15, 0x04, 0x15, 0x20, 0x15, 0x20, 0x4c, 0x15, 0xfe, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x00];
        let page = parse_page_header(&header).unwrap();
        assert_eq!(
            (page.uncompressed, page.compressed, page.dictionary_values),
            (16, 16, Some(i32::MAX as i64))
        );
        assert_eq!(page.header_len, header.len() as u64);
    }
}
