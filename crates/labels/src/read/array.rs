//! Typed n-dimensional arrays stored as raw bytes at an offset of a file (NPY, NPZ
//! members stored without compression, safetensors), read in row ranges by several
//! threads through bounded buffers, or streamed from a decompressor.

use super::positional;
use super::units::{ColumnInfo, Layout, ReadCtx, Unit, UnitEnd};
use crate::stats::{AsF64, Bounds, IntValue, Pos, Stats};
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;

/// Bytes per read, small enough that a block is still in the L2 cache when it is
/// counted; rounded down to whole rows when rows are smaller.
const BLOCK: usize = 512 << 10;
/// Arrays smaller than this are read by one thread.
const MIN_UNIT_BYTES: u64 = 16 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DTypeKind {
    Int,
    UInt,
    Float,
    /// bfloat16
    BFloat,
    Bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DType {
    pub kind: DTypeKind,
    /// Bytes per element.
    pub size: usize,
    pub big_endian: bool,
}

impl DType {
    pub fn name(&self) -> String {
        match self.kind {
            DTypeKind::Int => format!("int{}", self.size * 8),
            DTypeKind::UInt => format!("uint{}", self.size * 8),
            DTypeKind::Float => format!("float{}", self.size * 8),
            DTypeKind::BFloat => "bfloat16".to_string(),
            DTypeKind::Bool => "bool".to_string(),
        }
    }

    /// Whether the reader can decode this type.
    pub fn supported(&self) -> bool {
        match self.kind {
            DTypeKind::Int | DTypeKind::UInt => matches!(self.size, 1 | 2 | 4 | 8),
            DTypeKind::Float => matches!(self.size, 2 | 4 | 8),
            DTypeKind::BFloat => self.size == 2,
            DTypeKind::Bool => self.size == 1,
        }
    }
}

#[derive(Debug, Clone)]
pub struct ArraySpec {
    pub dtype: DType,
    pub shape: Vec<u64>,
    /// Column-major (NumPy `fortran_order`).
    pub fortran: bool,
}

impl ArraySpec {
    pub fn rows(&self) -> u64 {
        self.shape.first().copied().unwrap_or(1)
    }

    /// Elements per row (1 for a 1-D array).
    pub fn width(&self) -> u64 {
        self.shape.iter().skip(1).try_fold(1u64, |a, &d| a.checked_mul(d)).unwrap_or(u64::MAX)
    }

    pub fn elements(&self) -> Option<u64> {
        self.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d))
    }

    pub fn byte_len(&self) -> Option<u64> {
        self.elements()?.checked_mul(self.dtype.size as u64)
    }

    pub fn column(&self, name: Option<String>) -> ColumnInfo {
        let layout = match self.shape.len() {
            0 | 1 => Layout::Scalar,
            2 => Layout::Rows(Some(self.shape[1])),
            _ => Layout::Rows(Some(self.width())),
        };
        let mut info = ColumnInfo::new(name, self.dtype.name(), layout);
        info.shape = Some(self.shape.clone());
        info
    }

    /// Row-major rows are contiguous; only then can rows be split and classified.
    fn contiguous_rows(&self) -> bool {
        !self.fortran || self.shape.len() < 2
    }
}

/// Splits an array at `data_offset` of `path` into row ranges, one per unit.
pub fn units(path: PathBuf, data_offset: u64, spec: ArraySpec, parallelism: usize) -> Vec<Box<dyn Unit>> {
    let rows = spec.rows();
    let bytes = spec.byte_len().unwrap_or(0);
    let parts = if spec.contiguous_rows() {
        (bytes / MIN_UNIT_BYTES).clamp(1, parallelism.max(1) as u64).min(rows.max(1))
    } else {
        1
    };
    let path = Arc::new(path);
    let spec = Arc::new(spec);
    let step = rows.div_ceil(parts).max(1);
    let mut out: Vec<Box<dyn Unit>> = Vec::new();
    let mut start = 0;
    loop {
        let end = (start + step).min(rows);
        out.push(Box::new(ArrayUnit {
            path: path.clone(),
            data_offset,
            spec: spec.clone(),
            rows: (start, end),
        }));
        start = end;
        if start >= rows {
            break;
        }
    }
    out
}

struct ArrayUnit {
    path: Arc<PathBuf>,
    data_offset: u64,
    spec: Arc<ArraySpec>,
    rows: (u64, u64),
}

impl Unit for ArrayUnit {
    fn read(&self, ctx: &ReadCtx, stats: &mut Stats) -> anyhow::Result<UnitEnd> {
        let file = std::fs::File::open(&*self.path)?;
        let spec = &*self.spec;
        let (elements, start_elem) = if spec.contiguous_rows() {
            let w = spec.width();
            ((self.rows.1 - self.rows.0) * w, self.rows.0 * w)
        } else {
            (spec.elements().unwrap_or(0), 0)
        };
        let size = spec.dtype.size as u64;
        let start = self.data_offset + start_elem * size;
        match map_range(&file, start, elements * size) {
            Some(map) => feed_mapped(spec, ctx, stats, &map, elements),
            None => feed_blocks(spec, ctx, stats, elements, |bytes, done| {
                positional::read_exact_at(&file, bytes, start + done * size)
                    .map_err(|e| anyhow::anyhow!("{}: cannot read the array data: {e}", self.path.display()))
            })?,
        }
        Ok(UnitEnd { rows: self.rows.1 - self.rows.0, lines: 0 })
    }
}

/// Maps `[start, start + len)` of the file read-only, or `None` when the file cannot be
/// mapped (then it is read with `pread`).
fn map_range(file: &std::fs::File, start: u64, len: u64) -> Option<(memmap2::Mmap, usize)> {
    if len == 0 {
        return None;
    }
    let page = 4096u64;
    let aligned = start / page * page;
    // SAFETY: the mapping is read-only and private to this unit; a file truncated by
    // another process while it is read is the one hazard, as with any mmap reader.
    let map = unsafe {
        memmap2::MmapOptions::new().offset(aligned).len((start - aligned + len) as usize).map(file)
    }
    .ok()?;
    // Advice is a Unix hint; Windows reads ahead on its own.
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::Sequential);
    Some((map, (start - aligned) as usize))
}

/// Feeds a mapped range window by window, releasing each window's pages from this
/// process once counted, so the resident set stays bounded (the page cache keeps them).
fn feed_mapped(
    spec: &ArraySpec,
    ctx: &ReadCtx,
    stats: &mut Stats,
    (map, skip): &(memmap2::Mmap, usize),
    elements: u64,
) {
    const WINDOW_BLOCKS: usize = 16;
    let size = spec.dtype.size;
    let mut feeder = Feeder::new(spec);
    let window = feeder.block_elements() * WINDOW_BLOCKS;
    let mut done = 0u64;
    while done < elements {
        let n = (elements - done).min(window as u64) as usize;
        let offset = skip + done as usize * size;
        feeder.feed(stats, ctx.bounds, &map[offset..offset + n * size], done);
        // SAFETY: the mapping is read-only and file-backed: dropping the pages only
        // means they are read from the page cache again if touched.
        #[cfg(unix)]
        let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, offset, n * size) };
        done += n as u64;
    }
}

/// Reads a whole array from a stream (a compressed NPZ member).
pub fn read_stream(
    mut reader: impl Read,
    spec: &ArraySpec,
    ctx: &ReadCtx,
    stats: &mut Stats,
    name: &str,
) -> anyhow::Result<UnitEnd> {
    let elements = spec.elements().unwrap_or(0);
    feed_blocks(spec, ctx, stats, elements, |bytes, done| {
        reader.read_exact(bytes).map_err(|e| {
            anyhow::anyhow!("{name}: the array data ends early (after {done} of {elements} values): {e}")
        })
    })?;
    Ok(UnitEnd { rows: spec.rows(), lines: 0 })
}

/// Fills a bounded, aligned buffer block by block (`fill(bytes, first_element)`) and
/// feeds each block to the stats.
fn feed_blocks(
    spec: &ArraySpec,
    ctx: &ReadCtx,
    stats: &mut Stats,
    elements: u64,
    mut fill: impl FnMut(&mut [u8], u64) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let size = spec.dtype.size as u64;
    let mut feeder = Feeder::new(spec);
    let mut buf = AlignedBuf::new(feeder.block_elements().min(elements as usize) * spec.dtype.size);
    let mut done = 0u64;
    while done < elements {
        let n = (elements - done).min(feeder.block_elements() as u64);
        let bytes = buf.slice_mut((n * size) as usize);
        fill(bytes, done)?;
        feeder.feed(stats, ctx.bounds, bytes, done);
        done += n;
    }
    Ok(())
}

/// A byte buffer aligned for any element type.
struct AlignedBuf {
    words: Vec<u64>,
}

impl AlignedBuf {
    fn new(bytes: usize) -> AlignedBuf {
        AlignedBuf { words: vec![0; bytes.div_ceil(8).max(1)] }
    }

    fn slice_mut(&mut self, len: usize) -> &mut [u8] {
        let need = len.div_ceil(8);
        if self.words.len() < need {
            self.words.resize(need, 0);
        }
        // SAFETY: u64 has no invalid bit patterns and a stricter alignment than u8; the
        // slice covers `len <= 8 * words.len()` bytes of the vector.
        unsafe { std::slice::from_raw_parts_mut(self.words.as_mut_ptr().cast::<u8>(), len) }
    }
}

/// Decodes blocks of raw elements into the stats, classifying whole rows as it goes.
struct Feeder<'a> {
    spec: &'a ArraySpec,
    width: u64,
    /// Whether rows are contiguous in the data (row-major, or at most 1-D).
    row_major: bool,
    scratch: Scratch,
}

#[derive(Default)]
struct Scratch {
    f32s: Vec<f32>,
}

impl<'a> Feeder<'a> {
    fn new(spec: &'a ArraySpec) -> Feeder<'a> {
        Feeder {
            spec,
            width: spec.width().max(1),
            row_major: spec.contiguous_rows(),
            scratch: Scratch::default(),
        }
    }

    /// Elements per block: whole rows where rows fit.
    fn block_elements(&self) -> usize {
        let per_block = (BLOCK / self.spec.dtype.size) as u64;
        if self.width > 1 && self.width <= per_block {
            (per_block / self.width * self.width) as usize
        } else {
            per_block as usize
        }
    }

    /// `first` is the index (within the unit) of the block's first element.
    fn feed(&mut self, stats: &mut Stats, bounds: &Bounds, bytes: &[u8], first: u64) {
        let d = self.spec.dtype;
        let be = d.big_endian;
        match (d.kind, d.size) {
            (DTypeKind::Int, 1) => self.ints(stats, bounds, &decode::<i8>(bytes, be), first),
            (DTypeKind::Int, 2) => self.ints(stats, bounds, &decode::<i16>(bytes, be), first),
            (DTypeKind::Int, 4) => self.ints(stats, bounds, &decode::<i32>(bytes, be), first),
            (DTypeKind::Int, 8) => self.ints(stats, bounds, &decode::<i64>(bytes, be), first),
            (DTypeKind::UInt, 1) => self.ints(stats, bounds, bytes, first),
            (DTypeKind::UInt, 2) => self.ints(stats, bounds, &decode::<u16>(bytes, be), first),
            (DTypeKind::UInt, 4) => self.ints(stats, bounds, &decode::<u32>(bytes, be), first),
            (DTypeKind::UInt, 8) => self.ints(stats, bounds, &decode::<u64>(bytes, be), first),
            (DTypeKind::Bool, _) => self.ints(stats, bounds, bytes, first),
            (DTypeKind::Float, 4) => self.floats(stats, bounds, &decode::<f32>(bytes, be), first),
            (DTypeKind::Float, 8) => self.floats(stats, bounds, &decode::<f64>(bytes, be), first),
            (DTypeKind::Float, 2) | (DTypeKind::BFloat, _) => {
                let bf = d.kind == DTypeKind::BFloat;
                let mut f32s = std::mem::take(&mut self.scratch.f32s);
                f32s.clear();
                f32s.extend(decode::<u16>(bytes, be).iter().map(|&h| {
                    if bf {
                        bf16_to_f32(h)
                    } else {
                        f16_to_f32(h)
                    }
                }));
                self.floats(stats, bounds, &f32s, first);
                self.scratch.f32s = f32s;
            }
            _ => unreachable!("unsupported dtypes are rejected when the file is planned"),
        }
    }

    fn position(&self, element: u64) -> Pos {
        if self.width == 1 {
            Pos::row(element)
        } else if self.row_major {
            Pos::at(element / self.width, element % self.width)
        } else {
            let rows = self.spec.rows().max(1);
            Pos::at(element % rows, element / rows)
        }
    }

    fn ints<T: IntValue + AsF64>(&self, stats: &mut Stats, bounds: &Bounds, vals: &[T], first: u64) {
        stats.ints(vals, bounds, &|i| self.position(first + i as u64));
        self.rows(stats, bounds, vals, first);
    }

    fn floats<T: AsF64>(&self, stats: &mut Stats, bounds: &Bounds, vals: &[T], first: u64) {
        stats.floats(vals, bounds, &|i| self.position(first + i as u64));
        self.rows(stats, bounds, vals, first);
    }

    /// Row lengths and one-hot patterns of the whole rows in a block.
    fn rows<T: AsF64>(&self, stats: &mut Stats, bounds: &Bounds, vals: &[T], first: u64) {
        if self.width <= 1 || !self.row_major || !first.is_multiple_of(self.width) {
            return;
        }
        let two_d = self.spec.shape.len() == 2;
        for (r, row) in vals.chunks_exact(self.width as usize).enumerate() {
            let at = Pos::row(first / self.width + r as u64);
            stats.row_length(self.width, bounds, at);
            if two_d && bounds.row_patterns {
                stats.row_pattern(row, at);
            }
        }
    }
}

/// Fixed-size numbers decodable from bytes.
trait Element: Copy + Default + 'static {
    const SIZE: usize;
    fn from_le(b: &[u8]) -> Self;
    fn from_be(b: &[u8]) -> Self;
}

macro_rules! element {
    ($($t:ty),*) => {$(
        impl Element for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn from_le(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().expect("chunk of the element size"))
            }
            #[inline(always)]
            fn from_be(b: &[u8]) -> Self {
                <$t>::from_be_bytes(b.try_into().expect("chunk of the element size"))
            }
        }
    )*};
}
element!(i8, i16, i32, i64, u16, u32, u64, f32, f64);

/// The elements of `bytes`: borrowed when they are native-endian and aligned, decoded
/// into a new vector otherwise.
fn decode<T: Element>(bytes: &[u8], big_endian: bool) -> std::borrow::Cow<'_, [T]> {
    if big_endian == cfg!(target_endian = "big") {
        // SAFETY: every bit pattern is a valid value of the integer and float types
        // `Element` is implemented for; `align_to` only hands out aligned elements.
        let (head, body, tail) = unsafe { bytes.align_to::<T>() };
        if head.is_empty() && tail.is_empty() {
            return std::borrow::Cow::Borrowed(body);
        }
    }
    let chunks = bytes.chunks_exact(T::SIZE);
    std::borrow::Cow::Owned(if big_endian {
        chunks.map(T::from_be).collect()
    } else {
        chunks.map(T::from_le).collect()
    })
}

pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let mant = (h & 0x3ff) as u32;
    match exp {
        0 => {
            let v = mant as f32 * (1.0 / (1u32 << 24) as f32);
            if sign != 0 {
                -v
            } else {
                v
            }
        }
        31 => f32::from_bits(sign | 0x7f80_0000 | (mant << 13)),
        _ => f32::from_bits(sign | ((exp + 112) << 23) | (mant << 13)),
    }
}

pub fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_decodes() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(bf16_to_f32(0x3f80), 1.0);
    }

    #[test]
    fn decode_reads_both_endians() {
        let le = 300i32.to_le_bytes();
        let be = 300i32.to_be_bytes();
        assert_eq!(&*decode::<i32>(&le, false), &[300]);
        assert_eq!(&*decode::<i32>(&be, true), &[300]);
    }
}
