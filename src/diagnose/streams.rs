//! Which rank an assertion the GPU printed belongs to, and whether a traceback points at
//! the op that failed (synchronous) or only where an asynchronous error surfaced.

use super::failure::StreamKey;
use super::from_text::full_first_line;
use crate::kb::{KnowledgeBase, Role};
use crate::log::traceback::{ExceptionText, Traceback};
use crate::log::{AssertionGroup, LogScan};

/// Whether a traceback ends in the CUDA error an assert leaves behind, or a follow-on.
pub(super) fn shows_assert_error(tb: &Traceback) -> bool {
    tb.innermost().exception.as_ref().is_some_and(|e| {
        KnowledgeBase::get()
            .match_followon(&full_first_line(e))
            .is_some_and(|f| matches!(f.role, Role::StickyAssert | Role::Cascade))
    })
}

/// (log line, rank) of each ranked traceback that shows an assert error.
pub(super) fn assert_error_ranks(scan: &LogScan) -> Vec<(u64, u32)> {
    scan.tracebacks
        .iter()
        .filter(|t| shows_assert_error(&t.traceback))
        .filter_map(|t| Some((t.traceback.log_line, t.rank?)))
        .collect()
}

/// Assertion lines printed by the GPU carry no rank prefix when the launcher prefixes only
/// Python's output: give them to the rank whose traceback shows the assert error (the
/// first reported after the assertion printed, else the first at all).
pub(super) fn attribute_assertion(
    assert_errors: &[(u64, u32)],
    si: usize,
    group: &AssertionGroup,
) -> StreamKey {
    if let Some(r) = group.rank {
        return StreamKey::Rank(r);
    }
    assert_errors
        .iter()
        .filter(|(line, _)| *line >= group.first_log_line)
        .min()
        .or_else(|| assert_errors.iter().min())
        .map_or(StreamKey::Source(si), |&(_, r)| StreamKey::Rank(r))
}

/// No async warning after a CUDA error means CUDA_LAUNCH_BLOCKING was set (or the error
/// is not a CUDA error at all): the traceback points at the op that failed.
pub(super) fn is_synchronous(exc: &ExceptionText) -> bool {
    let kb = KnowledgeBase::get();
    !exc.lines().any(|l| kb.match_followon(l).is_some_and(|f| f.id == ASYNC_HINT))
}

/// The follow-on entry (followons.toml) of PyTorch's asynchronous-error warning.
pub(super) const ASYNC_HINT: &str = "async-hint";
