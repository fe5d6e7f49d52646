//! One row group's column chunk decoded straight into the stats, from its values and
//! definition/repetition levels.

use super::schema::{Leaf, Shape};
use crate::stats::{AsF64, Bounds, Pos, Stats};
use parquet::column::reader::ColumnReaderImpl;
use parquet::data_type::{ByteArrayType, DataType as ParquetType, FixedLenByteArray};

/// Rows decoded at a time: all of a scalar column's, fewer for lists, whose rows can hold
/// thousands of values each.
const SCALAR_BATCH: usize = 64 * 1024;
const LIST_BATCH: usize = 4 * 1024;

/// Values as the stats take them: integers counted as ids, floats checked for whole numbers.
pub(super) trait Value: Copy + Default + AsF64 {
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
pub(super) trait Decoded<Stored>: Value {
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
pub(super) struct ColumnOut<'a> {
    stats: &'a mut Stats,
    bounds: &'a Bounds,
    leaf: &'a Leaf,
    rows: u64,
}

/// Levels gathered for one list row before it is complete: a row longer than any label
/// row is refused rather than gathered without end.
const MAX_ROW_LEVELS: usize = 1 << 24;

/// Fails on levels outside `0..=max`, which the column's schema does not allow (pyarrow:
/// "Malformed levels").
fn check_levels(kind: &str, levels: &[i16], max: i16) -> anyhow::Result<()> {
    match levels.iter().find(|&&l| l < 0 || l > max) {
        Some(bad) => {
            anyhow::bail!("malformed levels: a {kind} level of {bad}, where the column's maximum is {max}")
        }
        None => Ok(()),
    }
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

impl<'a> ColumnOut<'a> {
    pub fn new(stats: &'a mut Stats, bounds: &'a Bounds, leaf: &'a Leaf, rows: u64) -> ColumnOut<'a> {
        ColumnOut { stats, bounds, leaf, rows }
    }

    /// The unit's rows fed so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Reads the whole column chunk; returns the unit's row count after it.
    pub fn read<P: ParquetType, V: Decoded<P::T>>(
        &mut self,
        mut reader: ColumnReaderImpl<P>,
    ) -> anyhow::Result<u64> {
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
            if complete == 0 && levels.rep.len() > MAX_ROW_LEVELS {
                anyhow::bail!("the list in row {} holds more than {MAX_ROW_LEVELS} values", self.rows);
            }
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

    pub fn text(&mut self, mut reader: ColumnReaderImpl<ByteArrayType>) -> anyhow::Result<u64> {
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
    /// Fails when the levels and values decoded do not fit the column, or when the file's
    /// deadline has passed.
    fn next_batch<P: ParquetType>(
        &self,
        reader: &mut ColumnReaderImpl<P>,
        max: usize,
        levels: &mut Levels,
        stored: &mut Vec<P::T>,
    ) -> anyhow::Result<usize> {
        crate::read::guard::on_time()?;
        let (def_from, rep_from, stored_from) = (levels.def.len(), levels.rep.len(), stored.len());
        let def = (self.leaf.max_def > 0).then_some(&mut levels.def);
        let rep = (self.leaf.shape != Shape::Scalar).then_some(&mut levels.rep);
        let (_, _, levels_read) = reader.read_records(max, def, rep, stored)?;
        let max_rep = i16::from(self.leaf.shape != Shape::Scalar);
        check_levels("definition", &levels.def[def_from..], self.leaf.max_def)?;
        check_levels("repetition", &levels.rep[rep_from..], max_rep)?;
        if rep_from == 0 && self.rows == 0 && levels.rep.first().is_some_and(|&r| r != 0) {
            anyhow::bail!("malformed levels: the column chunk starts inside a list");
        }
        let new_values = stored.len() - stored_from;
        let non_null = match self.leaf.max_def {
            0 => levels_read,
            max_def => levels.def[def_from..].iter().filter(|&&d| d == max_def).count(),
        };
        if new_values != non_null {
            anyhow::bail!("the page holds {new_values} values for {non_null} non-null levels");
        }
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
            let start = i;
            if def[i] < max_def {
                while i < def.len() && def[i] < max_def {
                    i += 1;
                }
                stats.nulls((i - start) as u64, |k| Pos::row(base + start as u64 + k));
                continue;
            }
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
