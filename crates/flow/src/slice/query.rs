//! What a trail is asked: the failing call's frames, the operand, the values the op
//! refused and the runtime facts that confirm steps; and what it follows (value, size,
//! shape, dtype) and the part each step plays.

use std::path::PathBuf;

/// One user frame of the failing call: the innermost first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub file: PathBuf,
    pub line: usize,
    pub function: Option<String>,
    /// The expression the frame was running, as character offsets `[start, end)` into the
    /// line without its indentation (Python 3.11+ marks it with `^^^`): of two calls on the
    /// line, the one that ran.
    pub columns: Option<(usize, usize)>,
}

/// What a trail follows: the bad values, the size they broke, a shape or a dtype.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Chain {
    Value,
    Size,
    Shape,
    Dtype,
}

impl Chain {
    pub fn as_str(self) -> &'static str {
        match self {
            Chain::Value => "value",
            Chain::Size => "size",
            Chain::Shape => "shape",
            Chain::Dtype => "dtype",
        }
    }
}

/// The part a step played. Ordered: when several happen on one line, the last wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// Moved, cast, reshaped, copied, passed or returned: the same values.
    Move,
    /// Taken out of a tuple, list, dict or batch.
    Unpack,
    /// Read from a container (`self.labels[i]`, `MAP[k]`).
    Read,
    /// Put into a container or attribute (`self.labels = …`, `pairs.append(…)`).
    Store,
    /// A module built with the size (or setting) the data broke.
    Sized,
    /// Where the value was computed.
    Made,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Move => "move",
            Role::Unpack => "unpack",
            Role::Read => "read",
            Role::Store => "store",
            Role::Sized => "sized",
            Role::Made => "made",
        }
    }
}

/// The values the op refused, to tell which of two possible sources gave them: a source
/// that provably cannot hold any of them (`(i * 5) % 6` for a 6) is not followed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BadValues {
    pub values: Vec<f64>,
    /// The values are not finite (NaN, inf) or outside a range: no single number.
    pub non_finite: bool,
    /// The size they broke (the number of classes, of embedding rows), when known: of two
    /// calls of the op on one line, the one of a table of that size refused them.
    pub bound: Option<f64>,
    /// The refused rows hold only zeros (rows of probabilities that sum to 0 with no
    /// negative value): a source whose rows always sum to 1 cannot have given them.
    pub zero_rows: bool,
}

/// Where the value the op refused sits on the innermost frame's line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Operand {
    /// The op (`cross_entropy`, `embedding`, `index`…), as the diagnosis names it.
    pub op: Option<String>,
    /// The op's parameter that held the value (`target`, `input`, `index`).
    pub parameter: Option<String>,
    /// Its position in the op's functional signature.
    pub position: Option<usize>,
    /// Local names (or container paths such as `batch["labels"]`) of the innermost frame
    /// whose value is the operand, as the process saw them.
    pub holders: Vec<String>,
}

/// Runtime facts about the failing process, all optional.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    /// User lines after which a local first held the bad value, re-reading the sample.
    pub lines: Vec<(PathBuf, usize, String)>,
    /// Attributes of the user's dataset object read live at the bad index:
    /// (class, attribute, holds the bad value).
    pub live: Vec<(String, String, bool)>,
    /// The user's dataset classes the bad sample came through, outermost first:
    /// (class, file, `__getitem__` line).
    pub datasets: Vec<(String, Option<PathBuf>, Option<usize>)>,
}

/// A trail to find: where the value is used and what is known of it.
#[derive(Debug, Clone, Default)]
pub struct Query {
    pub frames: Vec<Frame>,
    pub operand: Operand,
    pub chain: Option<Chain>,
    /// For a shape trail: follow the batch dimension (a batch-size mismatch, a batch of
    /// one sample) rather than a shape fact.
    pub rows: bool,
    pub bad: BadValues,
    pub observed: Observed,
}

/// A size trail: the module built with the size the data broke, from its construction
/// stack (innermost first), back to where the size was computed.
#[derive(Debug, Clone, Default)]
pub struct SizeQuery {
    /// The torch class built (`Linear`, `Embedding`, `CTCLoss`…).
    pub class: String,
    /// Its argument that set the size (`out_features`, `num_embeddings`).
    pub argument: Option<String>,
    pub sites: Vec<Frame>,
    pub size: Option<i64>,
    pub need: Option<i64>,
    /// What the module's step says, when the caller knows better (a loss built without
    /// the `ignore_index` the data uses).
    pub note: Option<String>,
}
