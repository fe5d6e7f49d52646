//! safetensors files: an 8-byte header length, a JSON header naming each tensor's dtype,
//! shape and byte range, then the raw tensors, read in place by row ranges.

use super::array::{self, ArraySpec, DType, DTypeKind};
use super::names::{open, pick_name};
use super::units::{FilePlan, ReadOptions};
use crate::input::InputFile;
use anyhow::bail;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::Read;

/// Headers are small; a larger length is a corrupt file, not a reason to allocate.
const MAX_HEADER: u64 = 100 << 20;

#[derive(Deserialize)]
struct TensorInfo {
    dtype: String,
    shape: Vec<u64>,
    data_offsets: [u64; 2],
}

pub fn plan(file: &InputFile, opts: &ReadOptions) -> anyhow::Result<FilePlan> {
    let (name, spec, data_offset) = tensor(file, opts)?;
    let column = spec.column(Some(name));
    let units = array::units(file.path.clone(), data_offset, spec, opts.parallelism);
    Ok(FilePlan { column, units, sequential: None })
}

pub fn count_rows(file: &InputFile, opts: &ReadOptions) -> anyhow::Result<u64> {
    Ok(tensor(file, opts)?.1.rows())
}

fn tensor(file: &InputFile, opts: &ReadOptions) -> anyhow::Result<(String, ArraySpec, u64)> {
    let shown = file.display();
    let mut f = open(file)?;
    let len = f.metadata()?.len();
    let mut n = [0u8; 8];
    f.read_exact(&mut n)
        .map_err(|_| anyhow::anyhow!("{shown}: not a safetensors file: shorter than its header"))?;
    let header_len = u64::from_le_bytes(n);
    if header_len > MAX_HEADER || 8 + header_len > len {
        bail!("{shown}: not a safetensors file, or truncated: the header claims {header_len} bytes");
    }
    let mut header = vec![0u8; header_len as usize];
    f.read_exact(&mut header).map_err(|e| anyhow::anyhow!("{shown}: cannot read the header: {e}"))?;
    let mut entries: BTreeMap<String, serde_json::Value> = serde_json::from_slice(&header)
        .map_err(|e| anyhow::anyhow!("{shown}: corrupt safetensors header: {e}"))?;
    entries.remove("__metadata__");
    let names: Vec<String> = entries.keys().cloned().collect();
    let name = pick_name(file, "tensor", opts.column.as_deref(), &names)?.to_string();
    let info: TensorInfo = serde_json::from_value(entries.remove(&name).expect("picked from the keys"))
        .map_err(|e| anyhow::anyhow!("{shown}: corrupt entry for tensor {name}: {e}"))?;
    let dtype = parse_dtype(&info.dtype).ok_or_else(|| {
        anyhow::anyhow!(
            "{shown}: tensor {name} has unsupported dtype {}; check reads integer, float and bool tensors",
            info.dtype
        )
    })?;
    let spec = ArraySpec { dtype, shape: info.shape, fortran: false };
    let [begin, end] = info.data_offsets;
    let need = spec.byte_len().unwrap_or(u64::MAX);
    if end < begin || end - begin != need {
        bail!(
            "{shown}: tensor {name}: its byte range {begin}..{end} does not match its shape {:?}",
            spec.shape
        );
    }
    let data_offset = 8 + header_len + begin;
    if data_offset + need > len {
        bail!(
            "{shown}: truncated: tensor {name} needs bytes up to {} but the file has {len}",
            data_offset + need
        );
    }
    Ok((name, spec, data_offset))
}

fn parse_dtype(s: &str) -> Option<DType> {
    let (kind, size) = match s {
        "I8" => (DTypeKind::Int, 1),
        "I16" => (DTypeKind::Int, 2),
        "I32" => (DTypeKind::Int, 4),
        "I64" => (DTypeKind::Int, 8),
        "U8" => (DTypeKind::UInt, 1),
        "U16" => (DTypeKind::UInt, 2),
        "U32" => (DTypeKind::UInt, 4),
        "U64" => (DTypeKind::UInt, 8),
        "F16" => (DTypeKind::Float, 2),
        "BF16" => (DTypeKind::BFloat, 2),
        "F32" => (DTypeKind::Float, 4),
        "F64" => (DTypeKind::Float, 8),
        "BOOL" => (DTypeKind::Bool, 1),
        _ => return None,
    };
    Some(DType { kind, size, big_endian: false })
}
