//! One error seen in a stream (a rank, or an input without ranks), classified, and how
//! strongly it explains the run's death.

use crate::log::traceback::Traceback;
use crate::log::AssertionGroup;
use crate::report::Location;
use serde_json::{Map, Value};

/// Where a failure was seen: a rank (from a prefix or a file name) or, for inputs without
/// ranks, the input itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum StreamKey {
    Rank(u32),
    Source(usize),
}

impl StreamKey {
    pub(super) fn rank(self) -> Option<u32> {
        match self {
            StreamKey::Rank(r) => Some(r),
            StreamKey::Source(_) => None,
        }
    }
}

/// How strongly a failure explains the run's death; lower is stronger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Strength {
    /// assertscope's own guard caught the bad value before any kernel ran.
    Guard,
    Assertion,
    HostCheck,
    StickyAssert,
    Cascade,
    /// A traceback cut off before its message: only the op its innermost frames are in.
    CutTraceback,
    PlainError,
    Peer,
    /// A traceback cut off before its message, in no op the knowledge base knows: it
    /// still says where the user's code was when the error happened.
    CutUnknown,
}

/// One error seen in a stream, classified.
#[derive(Debug, Clone)]
pub(super) struct Failure<'a> {
    pub(super) strength: Strength,
    /// Cause id (None for a plain Python error).
    pub(super) cause: Option<String>,
    pub(super) op: Option<String>,
    pub(super) title: Option<String>,
    pub(super) hint: Option<String>,
    pub(super) values: Map<String, Value>,
    /// The exception or error line, as printed.
    pub(super) text: String,
    /// Position in the input: (source index, log line).
    pub(super) at: (usize, u64),
    /// Recognised only by the stable part of a damaged message (cut off, glued).
    pub(super) tolerant: bool,
    /// The user's line as the error itself names it (the guard's `-->` line).
    pub(super) stated_location: Option<Location>,
    pub(super) traceback: Option<&'a Traceback>,
    pub(super) assertion: Option<&'a AssertionGroup>,
    pub(super) followon: Option<&'static crate::kb::FollowOn>,
}

#[derive(Default)]
pub(super) struct Stream<'a> {
    pub(super) failures: Vec<Failure<'a>>,
    pub(super) tracebacks: Vec<(usize, &'a Traceback)>,
}
