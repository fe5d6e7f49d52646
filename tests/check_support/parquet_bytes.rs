//! Parquet files built byte by byte (footer and page headers in Thrift's compact protocol),
//! to make the claims no writer makes: a dictionary of 2^31 values in 24 bytes, a schema
//! nested a million levels deep, hundreds of billions of nulls in a few kilobytes. The same
//! builder writes an honest file, which pyarrow must read, so that the bytes are known right.

/// A value of a Thrift field.
pub enum V {
    I32(i32),
    I64(i64),
    Bin(Vec<u8>),
    /// An encoded struct (from [`structure`]).
    Struct(Vec<u8>),
    Structs(Vec<Vec<u8>>),
    I32s(Vec<i32>),
    Bins(Vec<Vec<u8>>),
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn list_header(out: &mut Vec<u8>, len: usize, kind: u8) {
    if len < 15 {
        out.push((len as u8) << 4 | kind);
    } else {
        out.push(0xf0 | kind);
        varint(out, len as u64);
    }
}

/// A compact-protocol struct of these fields, in increasing id order.
pub fn structure(fields: Vec<(i16, V)>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut last = 0i16;
    for (id, value) in fields {
        let kind = match value {
            V::I32(_) => 5,
            V::I64(_) => 6,
            V::Bin(_) => 8,
            V::Struct(_) => 12,
            V::Structs(_) | V::I32s(_) | V::Bins(_) => 9,
        };
        let delta = id - last;
        if (1..=15).contains(&delta) {
            out.push((delta as u8) << 4 | kind);
        } else {
            out.push(kind);
            varint(&mut out, zigzag(id.into()));
        }
        last = id;
        match value {
            V::I32(v) => varint(&mut out, zigzag(v.into())),
            V::I64(v) => varint(&mut out, zigzag(v)),
            V::Bin(b) => {
                varint(&mut out, b.len() as u64);
                out.extend(b);
            }
            V::Struct(b) => out.extend(b),
            V::Structs(items) => {
                list_header(&mut out, items.len(), 12);
                items.into_iter().for_each(|i| out.extend(i));
            }
            V::I32s(items) => {
                list_header(&mut out, items.len(), 5);
                items.into_iter().for_each(|i| varint(&mut out, zigzag(i.into())));
            }
            V::Bins(items) => {
                list_header(&mut out, items.len(), 8);
                for b in items {
                    varint(&mut out, b.len() as u64);
                    out.extend(b);
                }
            }
        }
    }
    out.push(0);
    out
}

pub const INT64: i32 = 2;
pub const REQUIRED: i32 = 0;
pub const OPTIONAL: i32 = 1;
const PLAIN: i32 = 0;
const RLE: i32 = 3;
const RLE_DICTIONARY: i32 = 8;
const DATA_PAGE: i32 = 0;
const DICTIONARY_PAGE: i32 = 2;

/// The schema of one int64 column `label` below the root.
pub fn label_schema(repetition: i32) -> Vec<Vec<u8>> {
    vec![
        structure(vec![(4, V::Bin(b"schema".to_vec())), (5, V::I32(1))]),
        structure(vec![(1, V::I32(INT64)), (3, V::I32(repetition)), (4, V::Bin(b"label".to_vec()))]),
    ]
}

/// A dictionary page of plain int64 values, claiming `claimed` of them.
pub fn dictionary_page(values: &[i64], claimed: i32) -> Vec<u8> {
    let body: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let header = structure(vec![(1, V::I32(claimed)), (2, V::I32(PLAIN))]);
    page(DICTIONARY_PAGE, (7, header), body)
}

/// A v1 data page of a required column: `rows` rows, all dictionary index `index`.
pub fn dictionary_data_page(rows: i32, index: u8) -> Vec<u8> {
    // Bit width 2, then one RLE run of `rows` copies of `index`.
    let mut body = vec![2];
    varint(&mut body, (rows as u64) << 1);
    body.push(index);
    page(DATA_PAGE, (5, data_page_header(rows, RLE_DICTIONARY)), body)
}

/// A v1 data page of an optional column holding `rows` nulls: one RLE run of definition
/// level 0, a handful of bytes whatever `rows` is.
pub fn null_page(rows: i32) -> Vec<u8> {
    let mut levels = Vec::new();
    varint(&mut levels, (rows as u64) << 1);
    levels.push(0);
    let mut body = (levels.len() as u32).to_le_bytes().to_vec();
    body.extend(levels);
    page(DATA_PAGE, (5, data_page_header(rows, PLAIN)), body)
}

fn data_page_header(rows: i32, encoding: i32) -> Vec<u8> {
    structure(vec![(1, V::I32(rows)), (2, V::I32(encoding)), (3, V::I32(RLE)), (4, V::I32(RLE))])
}

fn page(kind: i32, (field, header): (i16, Vec<u8>), body: Vec<u8>) -> Vec<u8> {
    let len = body.len() as i32;
    let mut out =
        structure(vec![(1, V::I32(kind)), (2, V::I32(len)), (3, V::I32(len)), (field, V::Struct(header))]);
    out.extend(body);
    out
}

/// A whole file: one row group of one column chunk made of `dictionary` (a page, or
/// nothing) and `data` (pages), uncompressed.
pub fn file(schema: Vec<Vec<u8>>, rows: i64, dictionary: Option<Vec<u8>>, data: Vec<u8>) -> Vec<u8> {
    let mut out = b"PAR1".to_vec();
    let dictionary_offset = dictionary.as_ref().map(|_| out.len() as i64);
    out.extend(dictionary.unwrap_or_default());
    let data_offset = out.len() as i64;
    out.extend(data);
    let total = out.len() as i64 - 4;
    let mut meta = vec![
        (1, V::I32(INT64)),
        (2, V::I32s(vec![PLAIN, RLE, RLE_DICTIONARY])),
        (3, V::Bins(vec![b"label".to_vec()])),
        (4, V::I32(0)),
        (5, V::I64(rows)),
        (6, V::I64(total)),
        (7, V::I64(total)),
        (9, V::I64(data_offset)),
    ];
    if let Some(offset) = dictionary_offset {
        meta.push((11, V::I64(offset)));
    }
    let column = structure(vec![(2, V::I64(4)), (3, V::Struct(structure(meta)))]);
    let group = structure(vec![(1, V::Structs(vec![column])), (2, V::I64(total)), (3, V::I64(rows))]);
    let footer = structure(vec![
        (1, V::I32(1)),
        (2, V::Structs(schema)),
        (3, V::I64(rows)),
        (4, V::Structs(vec![group])),
    ]);
    out.extend(&footer);
    out.extend((footer.len() as u32).to_le_bytes());
    out.extend(b"PAR1");
    out
}
