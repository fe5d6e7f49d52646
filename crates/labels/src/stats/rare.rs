//! The cold path: counts and the first examples of everything unusual (values outside
//! the histogram's range, lengths, row patterns, text, nulls).

use super::bounds::Bounds;
use super::examples::{Examples, Pos, Sample};
use std::collections::BTreeMap;

/// Distinct values outside the dense histogram that are counted one by one.
const OUTSIDE_DISTINCT: usize = 4096;

/// Integer values outside the dense histogram.
#[derive(Debug, Clone, PartialEq)]
pub struct Outside {
    pub count: u64,
    pub min: i64,
    pub max: i64,
    /// Exact counts of the first [`OUTSIDE_DISTINCT`] distinct values.
    pub distinct: BTreeMap<i64, u64>,
    /// True when more distinct values were seen than `distinct` holds.
    pub overflowed: bool,
}

impl Default for Outside {
    fn default() -> Self {
        Outside { count: 0, min: i64::MAX, max: i64::MIN, distinct: BTreeMap::new(), overflowed: false }
    }
}

/// Row (sequence) lengths, for list columns and 2-D arrays.
#[derive(Debug, Clone, PartialEq)]
pub struct Lengths {
    pub rows: u64,
    pub min: u64,
    pub max: u64,
    pub total: u64,
    pub too_long: Examples,
    pub empty: Examples,
}

impl Default for Lengths {
    fn default() -> Self {
        Lengths {
            rows: 0,
            min: u64::MAX,
            max: 0,
            total: 0,
            too_long: Examples::default(),
            empty: Examples::default(),
        }
    }
}

/// What rows of several values look like, to tell one-hot and multi-hot targets apart
/// from sequences of class ids.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RowPatterns {
    pub rows: u64,
    /// Rows whose values are all 0 or 1.
    pub binary: u64,
    /// Binary rows with exactly one 1.
    pub one_hot: Examples,
    /// Binary rows with two or more 1s.
    pub multi_hot: Examples,
    /// Rows of all zeros.
    pub zeros: u64,
}

/// Everything the cold path records, kept apart from the histogram so the hot loop can
/// borrow both at once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rare {
    pub outside: Outside,
    pub over_bound: Examples,
    pub negative: Examples,
    pub ignored: u64,
    pub whole_floats: u64,
    pub float_min: f64,
    pub float_max: f64,
    pub finite_floats: u64,
    pub non_integer: Examples,
    pub nan_inf: Examples,
    pub nulls: Examples,
    pub text: Examples,
    /// Images whose pixels are colours (RGB/RGBA), not class indices.
    pub colour_images: Examples,
}

impl Rare {
    #[cold]
    #[inline(never)]
    pub(super) fn outside_int(&mut self, file: u32, v: i64, bounds: &Bounds, at: Pos) {
        let o = &mut self.outside;
        o.count += 1;
        o.min = o.min.min(v);
        o.max = o.max.max(v);
        if let Some(c) = o.distinct.get_mut(&v) {
            *c += 1;
        } else if o.distinct.len() < OUTSIDE_DISTINCT {
            o.distinct.insert(v, 1);
        } else {
            o.overflowed = true;
        }
        if bounds.ignore == Some(v) {
            self.ignored += 1;
        } else if v < 0 {
            self.negative.add(file, at, || Sample::Int(v));
        } else if bounds.upper.is_some_and(|u| v >= u) {
            self.over_bound.add(file, at, || Sample::Int(v));
        }
    }
}

impl Outside {
    pub(super) fn merge(&mut self, other: Outside) {
        self.count += other.count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.overflowed |= other.overflowed;
        for (v, c) in other.distinct {
            if let Some(mine) = self.distinct.get_mut(&v) {
                *mine += c;
            } else if self.distinct.len() < OUTSIDE_DISTINCT {
                self.distinct.insert(v, c);
            } else {
                self.overflowed = true;
            }
        }
    }
}
