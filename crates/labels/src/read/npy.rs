//! NumPy `.npy` files: a small header (a Python dict literal: dtype, order, shape) and the
//! raw array, read by row ranges in parallel.

use super::array::{self, ArraySpec, DType, DTypeKind};
use super::names::open;
use super::units::{FilePlan, ReadOptions};
use crate::input::InputFile;
use anyhow::bail;
use std::io::Read;

const MAGIC: &[u8] = b"\x93NUMPY";
/// Headers are small; a larger length is a corrupt file, not a reason to allocate.
const MAX_HEADER: usize = 1 << 20;

pub fn plan(file: &InputFile, opts: &ReadOptions) -> anyhow::Result<FilePlan> {
    let (spec, data_offset) = read_spec(file)?;
    let column = spec.column(None);
    let units = array::units(file.path.clone(), data_offset, spec, opts.parallelism);
    Ok(FilePlan { column, units, sequential: None })
}

pub fn count_rows(file: &InputFile) -> anyhow::Result<u64> {
    Ok(read_spec(file)?.0.rows())
}

/// The array spec and the offset of its data, checked against the file's length.
fn read_spec(file: &InputFile) -> anyhow::Result<(ArraySpec, u64)> {
    let mut f = open(file)?;
    let len = f.metadata()?.len();
    let (spec, data_offset) = parse_header(&mut f).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    check_length(&spec, len.saturating_sub(data_offset))
        .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    Ok((spec, data_offset))
}

/// Fails when fewer bytes follow the header than the shape needs.
pub fn check_length(spec: &ArraySpec, available: u64) -> anyhow::Result<()> {
    let Some(need) = spec.byte_len() else {
        bail!("the shape {:?} is too large", spec.shape);
    };
    if available < need {
        bail!(
            "truncated: the header says {} {} values ({need} bytes) but only {available} bytes of data follow",
            spec.elements().unwrap_or(0),
            spec.dtype.name()
        );
    }
    Ok(())
}

/// Reads and parses an NPY header; returns the spec and the header's total length.
pub fn parse_header(reader: &mut impl Read) -> anyhow::Result<(ArraySpec, u64)> {
    let mut prefix = [0u8; 8];
    reader
        .read_exact(&mut prefix)
        .map_err(|_| anyhow::anyhow!("not an NPY file: it is shorter than the NPY magic"))?;
    if &prefix[..6] != MAGIC {
        bail!("not an NPY file: it does not start with the NPY magic \\x93NUMPY");
    }
    let major = prefix[6];
    let (header_len, fixed) = match major {
        1 => {
            let mut n = [0u8; 2];
            reader.read_exact(&mut n).map_err(|_| anyhow::anyhow!("truncated NPY header"))?;
            (u16::from_le_bytes(n) as usize, 10)
        }
        2 | 3 => {
            let mut n = [0u8; 4];
            reader.read_exact(&mut n).map_err(|_| anyhow::anyhow!("truncated NPY header"))?;
            (u32::from_le_bytes(n) as usize, 12)
        }
        v => bail!("unsupported NPY format version {v}"),
    };
    if header_len > MAX_HEADER {
        bail!("corrupt NPY header: it claims to be {header_len} bytes long");
    }
    let mut header = vec![0u8; header_len];
    reader.read_exact(&mut header).map_err(|_| anyhow::anyhow!("truncated NPY header"))?;
    let text = String::from_utf8_lossy(&header);
    let spec = parse_dict(&text)?;
    Ok((spec, (fixed + header_len) as u64))
}

/// Parses `{'descr': '<i8', 'fortran_order': False, 'shape': (3, 4), }`.
fn parse_dict(text: &str) -> anyhow::Result<ArraySpec> {
    let descr =
        value_after(text, "descr").ok_or_else(|| anyhow::anyhow!("corrupt NPY header: no 'descr'"))?;
    let descr = descr.trim();
    if descr.starts_with('[') {
        bail!("unsupported dtype: a structured array ({}); save the label field alone", shorten(descr));
    }
    let quote = descr.chars().next().filter(|c| *c == '\'' || *c == '"');
    let descr = match quote {
        Some(q) => descr[1..].split(q).next().unwrap_or_default(),
        None => bail!("corrupt NPY header: bad 'descr'"),
    };
    let dtype = parse_descr(descr)?;
    let fortran = match value_after(text, "fortran_order").map(str::trim) {
        Some(v) if v.starts_with("True") => true,
        Some(v) if v.starts_with("False") => false,
        _ => bail!("corrupt NPY header: no 'fortran_order'"),
    };
    let shape_text =
        value_after(text, "shape").ok_or_else(|| anyhow::anyhow!("corrupt NPY header: no 'shape'"))?;
    let shape_text = shape_text.trim();
    let close = shape_text.find(')').filter(|_| shape_text.starts_with('('));
    let Some(close) = close else { bail!("corrupt NPY header: bad 'shape'") };
    let mut shape = Vec::new();
    for part in shape_text[1..close].split(',') {
        let part = part.trim().trim_end_matches('L');
        if part.is_empty() {
            continue;
        }
        shape.push(
            part.parse::<u64>().map_err(|_| anyhow::anyhow!("corrupt NPY header: bad dimension {part:?}"))?,
        );
    }
    Ok(ArraySpec { dtype, shape, fortran })
}

/// The text after `'key':` in the header dict.
fn value_after<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let quoted = [format!("'{key}'"), format!("\"{key}\"")];
    let at = quoted.iter().find_map(|k| text.find(k.as_str()).map(|i| i + k.len()))?;
    let rest = text[at..].trim_start();
    rest.strip_prefix(':')
}

/// `<i8`, `|u1`, `>f4`, `|b1`, `<f2` ...
fn parse_descr(descr: &str) -> anyhow::Result<DType> {
    let mut chars = descr.chars();
    let (order, rest) = match chars.next() {
        Some(c @ ('<' | '>' | '|' | '=')) => (c, chars.as_str()),
        _ => ('=', descr),
    };
    let big_endian = match order {
        '>' => true,
        '<' => false,
        _ => cfg!(target_endian = "big"),
    };
    let mut chars = rest.chars();
    let code = chars.next();
    let size = chars.as_str();
    let size: usize = if size.is_empty() && code == Some('?') { 1 } else { size.parse().unwrap_or(0) };
    let kind = match code {
        Some('i') => DTypeKind::Int,
        Some('u') => DTypeKind::UInt,
        Some('f') => DTypeKind::Float,
        Some('b' | '?') => DTypeKind::Bool,
        Some('U' | 'S' | 'a') => {
            bail!("unsupported dtype {descr:?} (strings): labels must be stored as numbers")
        }
        Some('O') => {
            bail!("unsupported dtype {descr:?} (Python objects): save a numeric array, not an object array")
        }
        Some('c') => bail!("unsupported dtype {descr:?} (complex numbers)"),
        Some('M' | 'm') => bail!("unsupported dtype {descr:?} (dates and times)"),
        _ => bail!("unsupported dtype {descr:?}"),
    };
    let dtype = DType { kind, size, big_endian };
    if !dtype.supported() {
        bail!("unsupported dtype {descr:?} ({}-byte {kind:?})", size);
    }
    Ok(dtype)
}

fn shorten(s: &str) -> String {
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_numpy_headers() {
        let spec = parse_dict("{'descr': '<i8', 'fortran_order': False, 'shape': (3, 4), }").unwrap();
        assert_eq!(spec.shape, vec![3, 4]);
        assert_eq!(spec.dtype, DType { kind: DTypeKind::Int, size: 8, big_endian: false });
        let spec = parse_dict("{'descr': '>f2', 'fortran_order': True, 'shape': (), }").unwrap();
        assert!(spec.shape.is_empty() && spec.fortran && spec.dtype.big_endian);
        let spec = parse_dict("{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }").unwrap();
        assert_eq!(spec.dtype.kind, DTypeKind::Bool);
    }

    #[test]
    fn rejects_unsupported_dtypes_in_one_line() {
        let err = parse_dict("{'descr': '<U5', 'fortran_order': False, 'shape': (3,), }").unwrap_err();
        assert!(err.to_string().contains("strings"), "{err}");
        let err = parse_dict("{'descr': '<f16', 'fortran_order': False, 'shape': (3,), }").unwrap_err();
        assert!(err.to_string().contains("unsupported dtype"), "{err}");
        // Found by fuzzing: a multi-byte character where the type code belongs.
        let err = parse_dict("{'descr': '<\u{e9}8', 'fortran_order': False, 'shape': (3,), }").unwrap_err();
        assert!(err.to_string().contains("unsupported dtype"), "{err}");
    }
}
