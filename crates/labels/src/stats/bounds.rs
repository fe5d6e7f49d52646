//! The bounds a run checks against, fixed before any data is read, and the size of the
//! dense histogram they call for.

/// The dense histogram never grows beyond this many bins (8 MiB per worker).
const HIST_CAP: usize = 1 << 20;
/// Histogram size when no bound is given: covers every usual class id and void label.
const HIST_DEFAULT: usize = 1 << 16;

/// The bounds a run checks against, fixed before any data is read.
#[derive(Debug, Clone)]
pub struct Bounds {
    /// Exclusive upper bound on valid ids (num_classes or vocab size), if known.
    pub upper: Option<i64>,
    /// A value the loss skips (ignore_index); never counted as out of range.
    pub ignore: Option<i64>,
    /// Longest allowed sequence (row length), if known.
    pub max_positions: Option<u64>,
    /// Whether rows of several values should be classified as one-hot / multi-hot.
    pub row_patterns: bool,
}

impl Bounds {
    pub fn hist_len(&self) -> usize {
        match self.upper {
            Some(u) if u > 0 => (u as usize).min(HIST_CAP),
            Some(_) => 0,
            None => HIST_DEFAULT,
        }
    }
}
