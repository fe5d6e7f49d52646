//! The backward slice: from the value an op refused, at the user's line, back through the
//! statements that provably carried it, to the statement that computed it ("made here"),
//! or to the point past which the analysis cannot prove where it came from (the end of
//! the trail, said as such). Every step drawn is a step followed in the source; runtime
//! facts (the call stack, lines the bad value was seen on, live reads of the dataset)
//! confirm steps or choose between branches the source leaves open, never replace one.
//!
//! ```text
//! loss = F.cross_entropy(logits, topic)          the operand `topic`
//! for features, topic in loader:                 unpack: element 1 of a batch
//! loader = DataLoader(Docs(DOCS, TOPICS), …)     move: the default collate stacks samples
//! return features, self.topic_to_id[topic]       read from `self.topic_to_id`
//! self.topic_to_id = {n: i for i, n in enumerate(topics, start=1)}   made: numbered from 1
//! ```
//!
//! [`trace`] answers one [`Query`]; [`project`] reads and parses the files it needs;
//! [`follow`] takes the steps; [`made`] says which expressions compute a value and why
//! that gives the bad one; [`ops`] knows where an op's operand sits in a call.

mod access;
mod attributes;
mod calls;
mod collate;
mod configs;
mod follow;
mod heads;
pub mod index;
mod library;
mod literals;
mod loaders;
mod made;
mod mutations;
mod names;
pub mod ops;
mod params;
mod permute;
pub mod project;
mod resolve;
mod rows;
mod shapes;
mod size;
mod start;
mod trail;

pub use project::{Arena, Module, Project, Sources, Stamp, Store};

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

/// One proved step of a trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// As shown (relative to the working directory when under it).
    pub file: String,
    pub path: PathBuf,
    pub line: usize,
    pub function: String,
    /// The line's text, without its indentation.
    pub code: String,
    pub role: Role,
    pub chain: Chain,
    pub note: String,
    /// A runtime fact confirms it: the call stack ran this line, the bad value was seen
    /// on it, or a live read of the object it reads holds the bad value.
    pub confirmed: bool,
}

/// Where a trail stops before reaching the statement that made the value, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct End {
    pub file: String,
    pub path: PathBuf,
    pub line: usize,
    pub function: String,
    pub code: String,
    pub note: String,
}

/// The answer to one query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trail {
    pub steps: Vec<Step>,
    pub end: Option<End>,
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

/// Follows the operand of `query` back to where it was made.
pub fn trace(project: &Project<'_>, query: &Query) -> Trail {
    trail::value_trail(project, query)
}

/// Follows a module's size back to where it was computed.
pub fn trace_size(project: &Project<'_>, query: &SizeQuery) -> Trail {
    size::size_trail(project, query)
}

/// The size trail of what the op's values broke, found by flow: `one_hot`'s `num_classes`,
/// the length of an indexed tensor and, with `modules`, the module the op ran with (the
/// classes a loss's input scores, the rows of an embedding table) when no runtime fact
/// names it.
pub fn trace_size_by_flow(project: &Project<'_>, query: &Query, modules: bool) -> Trail {
    size::size_by_flow(project, query, modules)
}

/// The one bad value of `query` when it looks like padding or a void label (negative, 255):
/// such a value breaks the loss's `ignore_index`, not the size of a head.
pub fn void_label(query: &Query) -> Option<f64> {
    size::void_label(&query.bad.values)
}

/// Runs `f` with a project over `sources`: the files it reads live as long as the call.
pub fn with_project<R>(sources: Sources, f: impl FnOnce(&Project<'_>) -> R) -> R {
    let store = Store::default();
    let project = Project::new(&store, sources);
    f(&project)
}
