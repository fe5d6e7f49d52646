//! Where an unusual value was seen (file, row, position, line) and the first few of each
//! kind kept as examples; [`Shift`] moves a later unit's positions past an earlier one's.

/// How many offending positions are kept per kind of problem.
pub const KEEP: usize = 10;

/// Where a value sits: the row (0-based data row within the unit, or image row `y` for
/// masks), the 1-based text line when the format has lines, and the position inside the
/// row (sequence position, column, or pixel `x`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    pub row: u64,
    pub line: Option<u64>,
    pub pos: Option<u64>,
}

impl Pos {
    pub fn row(row: u64) -> Pos {
        Pos { row, line: None, pos: None }
    }
    pub fn at(row: u64, pos: u64) -> Pos {
        Pos { row, line: None, pos: Some(pos) }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Sample {
    Int(i64),
    Float(f64),
    Null,
    Text(String),
    /// A row (sequence) length.
    Len(u64),
    /// A row of several values, e.g. a one-hot row.
    Row(Vec<f64>),
}

impl std::fmt::Display for Sample {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Sample::Int(v) => write!(f, "{v}"),
            Sample::Float(v) => write!(f, "{v}"),
            Sample::Null => f.write_str("empty"),
            Sample::Text(t) => write!(f, "{t:?}"),
            Sample::Len(n) => write!(f, "length {n}"),
            Sample::Row(vals) => {
                f.write_str("[")?;
                for (i, v) in vals.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    /// Index into the list of input files.
    pub file: u32,
    pub at: Pos,
    pub value: Sample,
}

/// A count and the first [`KEEP`] positions of one kind of problem.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Examples {
    pub count: u64,
    pub first: Vec<Example>,
}

impl Examples {
    pub(super) fn add(&mut self, file: u32, at: Pos, value: impl FnOnce() -> Sample) {
        self.count += 1;
        if self.first.len() < KEEP {
            self.first.push(Example { file, at, value: value() });
        }
    }

    pub(super) fn merge(&mut self, mut other: Examples, shift: &Shift) {
        self.count += other.count;
        for ex in other.first.iter_mut() {
            shift.apply(ex);
        }
        let room = KEEP.saturating_sub(self.first.len());
        self.first.extend(other.first.into_iter().take(room));
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// Rows and text lines one unit (or a run of units) saw in one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileRows {
    pub file: u32,
    pub rows: u64,
    pub lines: u64,
}

/// How to move a later unit's positions after an earlier unit of the same file.
pub(super) struct Shift {
    pub(super) file: u32,
    pub(super) rows: u64,
    pub(super) lines: u64,
}

impl Shift {
    pub(super) fn apply(&self, ex: &mut Example) {
        if ex.file == self.file {
            ex.at.row += self.rows;
            ex.at.line = ex.at.line.map(|l| l + self.lines);
        }
    }
}
