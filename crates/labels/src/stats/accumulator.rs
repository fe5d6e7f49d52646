//! [`Stats`]: the accumulator itself. The hot path counts integers into the dense
//! histogram (in four lanes when it is small); everything else goes to [`Rare`].

use super::bounds::Bounds;
use super::examples::{FileRows, Pos, Sample, Shift, KEEP};
use super::rare::{Lengths, Rare, RowPatterns};
use super::values::{AsF64, IntValue};

/// Histograms up to this size are counted in four lanes.
const LANED_HIST: usize = 1024;

#[derive(Debug, Clone)]
pub struct Stats {
    /// The file the unit being read belongs to; examples are tagged with it.
    pub file: u32,
    pub files: Vec<FileRows>,
    pub hist: Vec<u64>,
    pub rare: Rare,
    pub lengths: Lengths,
    pub patterns: RowPatterns,
    /// Scratch space for [`Stats::ints_laned`].
    lanes: Vec<u64>,
}

impl Stats {
    /// An empty accumulator for a unit of file `file`.
    pub fn new(bounds: &Bounds, file: u32) -> Stats {
        Stats {
            file,
            files: Vec::new(),
            hist: vec![0; bounds.hist_len()],
            rare: Rare { float_min: f64::INFINITY, float_max: f64::NEG_INFINITY, ..Rare::default() },
            lengths: Lengths::default(),
            patterns: RowPatterns::default(),
            lanes: Vec::new(),
        }
    }

    /// Records that the unit covered `rows` rows and `lines` text lines of its file.
    pub fn finish_unit(&mut self, rows: u64, lines: u64) {
        self.files.push(FileRows { file: self.file, rows, lines });
    }

    /// Data rows seen, over all files.
    pub fn rows(&self) -> u64 {
        self.files.iter().map(|f| f.rows).sum()
    }

    /// Integer-valued values seen (including whole-number floats).
    pub fn int_count(&self) -> u64 {
        self.hist.iter().sum::<u64>() + self.rare.outside.count
    }

    /// Every value seen: integers, non-integers, NaN/inf, empty fields and text.
    pub fn value_count(&self) -> u64 {
        let r = &self.rare;
        self.int_count() + r.non_integer.count + r.nan_inf.count + r.nulls.count + r.text.count
    }

    /// Smallest and largest integer value seen.
    pub fn int_range(&self) -> Option<(i64, i64)> {
        let first = self.hist.iter().position(|&c| c > 0).map(|i| i as i64);
        let last = self.hist.iter().rposition(|&c| c > 0).map(|i| i as i64);
        let o = &self.rare.outside;
        let (omin, omax) = if o.count > 0 { (Some(o.min), Some(o.max)) } else { (None, None) };
        let min = [first, omin].into_iter().flatten().min()?;
        let max = [last, omax].into_iter().flatten().max()?;
        Some((min, max))
    }

    /// How often `value` occurred, when that is known exactly.
    pub fn count_of(&self, value: i64) -> Option<u64> {
        if value >= 0 && (value as u64) < self.hist.len() as u64 {
            return Some(self.hist[value as usize]);
        }
        match self.rare.outside.distinct.get(&value) {
            Some(&c) => Some(c),
            None if !self.rare.outside.overflowed => Some(0),
            None => None,
        }
    }

    /// One integer value (the hot path).
    #[inline(always)]
    pub fn int(&mut self, v: i64, bounds: &Bounds, at: impl FnOnce() -> Pos) {
        if (v as u64) < self.hist.len() as u64 {
            self.hist[v as usize] += 1;
        } else {
            self.rare.outside_int(self.file, v, bounds, at());
        }
    }

    /// A run of integer values; `at(i)` gives the position of `vals[i]` and is only
    /// called for values off the hot path.
    #[inline]
    pub fn ints<T: IntValue>(&mut self, vals: &[T], bounds: &Bounds, at: &dyn Fn(usize) -> Pos) {
        if self.hist.len() <= LANED_HIST && vals.len() >= 4 * LANED_HIST {
            return self.ints_laned(vals, bounds, at);
        }
        let hist = &mut self.hist[..];
        let n = hist.len() as u64;
        for (i, &v) in vals.iter().enumerate() {
            let v = v.to_i64();
            if (v as u64) < n {
                hist[v as usize] += 1;
            } else {
                self.rare.outside_int(self.file, v, bounds, at(i));
            }
        }
    }

    /// [`Stats::ints`] for few classes: four interleaved histograms, so that runs of one
    /// class do not serialise on a single counter.
    fn ints_laned<T: IntValue>(&mut self, vals: &[T], bounds: &Bounds, at: &dyn Fn(usize) -> Pos) {
        let n = self.hist.len();
        let mut lanes = std::mem::take(&mut self.lanes);
        lanes.clear();
        lanes.resize(4 * n, 0);
        let (a, rest) = lanes.split_at_mut(n);
        let (b, rest) = rest.split_at_mut(n);
        let (c, d) = rest.split_at_mut(n);
        let limit = n as u64;
        let mut chunks = vals.chunks_exact(4);
        for (k, chunk) in chunks.by_ref().enumerate() {
            for (lane, (j, &v)) in
                [&mut *a, &mut *b, &mut *c, &mut *d].into_iter().zip(chunk.iter().enumerate())
            {
                let v = v.to_i64();
                if (v as u64) < limit {
                    lane[v as usize] += 1;
                } else {
                    self.rare.outside_int(self.file, v, bounds, at(4 * k + j));
                }
            }
        }
        let done = vals.len() - chunks.remainder().len();
        for (j, &v) in chunks.remainder().iter().enumerate() {
            let v = v.to_i64();
            if (v as u64) < limit {
                a[v as usize] += 1;
            } else {
                self.rare.outside_int(self.file, v, bounds, at(done + j));
            }
        }
        for (i, h) in self.hist.iter_mut().enumerate() {
            *h += a[i] + b[i] + c[i] + d[i];
        }
        self.lanes = lanes;
    }

    /// One floating-point value: whole numbers count as class ids (and are remembered as
    /// floats), anything else is recorded as non-integer or NaN/inf.
    #[inline]
    pub fn float(&mut self, v: f64, bounds: &Bounds, at: impl FnOnce() -> Pos) {
        if !v.is_finite() {
            let file = self.file;
            self.rare.nan_inf.add(file, at(), || Sample::Float(v));
            return;
        }
        let r = &mut self.rare;
        r.finite_floats += 1;
        r.float_min = r.float_min.min(v);
        r.float_max = r.float_max.max(v);
        if v.fract() == 0.0 && v.abs() < 9.0e18 {
            r.whole_floats += 1;
            self.int(v as i64, bounds, at);
        } else {
            let file = self.file;
            self.rare.non_integer.add(file, at(), || Sample::Float(v));
        }
    }

    #[inline]
    pub fn floats<T: AsF64>(&mut self, vals: &[T], bounds: &Bounds, at: &dyn Fn(usize) -> Pos) {
        for (i, &v) in vals.iter().enumerate() {
            self.float(v.as_f64(), bounds, || at(i));
        }
    }

    /// A missing value (empty field, null).
    pub fn null(&mut self, at: Pos) {
        let file = self.file;
        self.rare.nulls.add(file, at, || Sample::Null);
    }

    /// `count` missing values in a row, the first at `first` (an all-null column, which a
    /// few bytes can claim billions of rows of).
    pub fn nulls(&mut self, count: u64, first: impl Fn(u64) -> Pos) {
        let file = self.file;
        let kept = self.rare.nulls.first.len() as u64;
        for i in 0..count.min((KEEP as u64).saturating_sub(kept)) {
            self.rare.nulls.add(file, first(i), || Sample::Null);
        }
        self.rare.nulls.count += count - count.min((KEEP as u64).saturating_sub(kept));
    }

    /// A value that is not a number at all.
    pub fn text(&mut self, text: &[u8], at: Pos) {
        let file = self.file;
        self.rare.text.add(file, at, || {
            let s = String::from_utf8_lossy(text);
            let mut t: String = s.chars().take(40).collect();
            if s.chars().count() > 40 {
                t.push('…');
            }
            Sample::Text(t)
        });
    }

    /// An image that holds colours rather than class indices.
    pub fn colour_image(&mut self, kind: &str) {
        let file = self.file;
        self.rare.colour_images.add(file, Pos::row(0), || Sample::Text(kind.to_string()));
    }

    /// The length of one row of several values (a sequence, or a row of a 2-D array).
    #[inline]
    pub fn row_length(&mut self, len: u64, bounds: &Bounds, at: Pos) {
        let file = self.file;
        let l = &mut self.lengths;
        l.rows += 1;
        l.total += len;
        l.min = l.min.min(len);
        l.max = l.max.max(len);
        if len == 0 {
            l.empty.add(file, at, || Sample::Len(0));
        }
        if bounds.max_positions.is_some_and(|m| len > m) {
            l.too_long.add(file, at, || Sample::Len(len));
        }
    }

    /// Classifies one row of several values as one-hot / multi-hot / other.
    #[inline]
    pub fn row_pattern<T: AsF64>(&mut self, row: &[T], at: Pos) {
        let p = &mut self.patterns;
        p.rows += 1;
        let mut ones = 0u64;
        for &v in row {
            let v = v.as_f64();
            if v == 1.0 {
                ones += 1;
            } else if v != 0.0 {
                return;
            }
        }
        p.binary += 1;
        let file = self.file;
        let sample = || Sample::Row(row.iter().take(16).map(|&v| v.as_f64()).collect());
        match ones {
            0 => p.zeros += 1,
            1 => p.one_hot.add(file, at, sample),
            _ => p.multi_hot.add(file, at, sample),
        }
    }

    /// Joins the stats of the unit(s) that come right after `self`'s in input order.
    pub fn merge(&mut self, mut other: Stats) {
        let shift = match (self.files.last(), other.files.first()) {
            (Some(a), Some(b)) if a.file == b.file => Shift { file: a.file, rows: a.rows, lines: a.lines },
            _ => Shift { file: u32::MAX, rows: 0, lines: 0 },
        };
        if self.hist.len() < other.hist.len() {
            std::mem::swap(&mut self.hist, &mut other.hist);
        }
        for (a, b) in self.hist.iter_mut().zip(&other.hist) {
            *a += b;
        }
        let (r, o) = (&mut self.rare, other.rare);
        r.outside.merge(o.outside);
        r.over_bound.merge(o.over_bound, &shift);
        r.negative.merge(o.negative, &shift);
        r.ignored += o.ignored;
        r.whole_floats += o.whole_floats;
        r.finite_floats += o.finite_floats;
        r.float_min = r.float_min.min(o.float_min);
        r.float_max = r.float_max.max(o.float_max);
        r.non_integer.merge(o.non_integer, &shift);
        r.nan_inf.merge(o.nan_inf, &shift);
        r.nulls.merge(o.nulls, &shift);
        r.text.merge(o.text, &shift);
        r.colour_images.merge(o.colour_images, &shift);

        let (l, ol) = (&mut self.lengths, other.lengths);
        l.rows += ol.rows;
        l.total += ol.total;
        l.min = l.min.min(ol.min);
        l.max = l.max.max(ol.max);
        l.too_long.merge(ol.too_long, &shift);
        l.empty.merge(ol.empty, &shift);

        let (p, op) = (&mut self.patterns, other.patterns);
        p.rows += op.rows;
        p.binary += op.binary;
        p.zeros += op.zeros;
        p.one_hot.merge(op.one_hot, &shift);
        p.multi_hot.merge(op.multi_hot, &shift);

        let mut rest = other.files.into_iter();
        if shift.file != u32::MAX {
            let first = rest.next().expect("shift implies a first file");
            let last = self.files.last_mut().expect("shift implies a last file");
            last.rows += first.rows;
            last.lines += first.lines;
        }
        self.files.extend(rest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(upper: Option<i64>) -> Bounds {
        Bounds { upper, ignore: Some(-100), max_positions: Some(3), row_patterns: true }
    }

    #[test]
    fn merge_shifts_rows_of_the_same_file_only() {
        let b = bounds(Some(10));
        let mut a = Stats::new(&b, 0);
        a.ints(&[1i64, 2, 3], &b, &|i| Pos { row: i as u64, line: Some(i as u64 + 2), pos: None });
        a.finish_unit(3, 3);
        let mut c = Stats::new(&b, 0);
        c.ints(&[12i64, -1, -100], &b, &|i| Pos { row: i as u64, line: Some(i as u64 + 1), pos: None });
        c.finish_unit(3, 3);
        let mut d = Stats::new(&b, 1);
        d.ints(&[10i64], &b, &|i| Pos::row(i as u64));
        d.finish_unit(1, 0);
        c.merge(d);
        a.merge(c);
        assert_eq!(a.rows(), 7);
        assert_eq!(a.rare.over_bound.count, 2);
        let firsts: Vec<_> = a.rare.over_bound.first.iter().map(|e| (e.file, e.at.row, e.at.line)).collect();
        assert_eq!(firsts, vec![(0, 3, Some(4)), (1, 0, None)]);
        assert_eq!(a.rare.negative.first[0].at.row, 4);
        assert_eq!(a.rare.ignored, 1);
        assert_eq!(a.int_range(), Some((-100, 12)));
        assert_eq!(
            a.files,
            vec![FileRows { file: 0, rows: 6, lines: 6 }, FileRows { file: 1, rows: 1, lines: 0 }]
        );
    }

    #[test]
    fn laned_counting_matches_plain_counting() {
        let b = bounds(Some(10));
        let vals: Vec<i64> = (0..10_003).map(|i| (i * 7919) % 13 - 1).collect();
        let mut laned = Stats::new(&b, 0);
        laned.ints(&vals, &b, &|i| Pos::row(i as u64));
        let mut plain = Stats::new(&b, 0);
        for (i, &v) in vals.iter().enumerate() {
            plain.int(v, &b, || Pos::row(i as u64));
        }
        assert_eq!(laned.hist, plain.hist);
        assert_eq!(laned.rare, plain.rare);
        assert_eq!(laned.rare.over_bound.first[0].at.row, plain.rare.over_bound.first[0].at.row);
    }

    #[test]
    fn floats_split_into_whole_non_integer_and_nan() {
        let b = bounds(None);
        let mut s = Stats::new(&b, 0);
        s.floats(&[1.0f64, 2.5, f64::NAN, 3.0, f64::INFINITY], &b, &|i| Pos::row(i as u64));
        assert_eq!(s.rare.whole_floats, 2);
        assert_eq!(s.rare.non_integer.count, 1);
        assert_eq!(s.rare.nan_inf.count, 2);
        assert_eq!(s.int_range(), Some((1, 3)));
    }

    #[test]
    fn row_patterns_tell_one_hot_from_multi_hot() {
        let b = bounds(None);
        let mut s = Stats::new(&b, 0);
        s.row_pattern(&[0.0f64, 1.0, 0.0], Pos::row(0));
        s.row_pattern(&[1.0f64, 1.0, 0.0], Pos::row(1));
        s.row_pattern(&[3.0f64, 1.0, 0.0], Pos::row(2));
        assert_eq!((s.patterns.rows, s.patterns.binary), (3, 2));
        assert_eq!((s.patterns.one_hot.count, s.patterns.multi_hot.count), (1, 1));
    }
}
