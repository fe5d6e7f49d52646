//! A traceback as a failure: its exception, and what its frames say about the op; when
//! the paste stopped before the message, its innermost frames alone (low confidence).

use super::failure::{Failure, Strength};
use super::frames;
use super::from_text::classify_exception;
use super::streams::is_synchronous;
use crate::kb::KnowledgeBase;
use crate::log::traceback::Traceback;
use serde_json::Map;

pub(super) fn classify_traceback<'a>(
    kb: &'static KnowledgeBase,
    si: usize,
    tb: &'a Traceback,
) -> Option<Failure<'a>> {
    let inner = tb.innermost();
    let exc = inner.exception.as_ref().or(tb.exception.as_ref());
    let classified = exc.and_then(|e| classify_exception(kb, si, e));
    // No exception line, or only a stray line that stood in for one: the paste stopped
    // before the message.
    let cut = exc.is_none_or(|e| e.type_name.is_none());
    if cut && classified.as_ref().is_none_or(|f| f.strength == Strength::PlainError) {
        if let Some(f) = cut_traceback_failure(kb, si, tb) {
            return Some(f);
        }
        if classified.is_none() && frames::user_frame(tb).is_some() {
            return Some(cut_unknown_failure(si, tb));
        }
    }
    let exc = exc?;
    let mut f = classified?;
    f.traceback = Some(tb);
    apply_frames(kb, &mut f, tb, is_synchronous(exc));
    Some(f)
}

/// A traceback that stops before its message, read from its innermost frames: the op they
/// are in, and what bad values mean for it. Weak evidence: stated as low confidence.
pub(super) fn cut_traceback_failure<'a>(
    kb: &'static KnowledgeBase,
    si: usize,
    tb: &'a Traceback,
) -> Option<Failure<'a>> {
    let Some((frame, op)) = frames::innermost_first(tb).into_iter().find_map(|frame| {
        let is_torch = frames::origin(&frame.file) == frames::Origin::Torch;
        kb.op_of_frame(frame.function.as_deref(), frame.code.as_deref(), is_torch).map(|op| (frame, op))
    }) else {
        return index_error_in_loss_call(si, tb);
    };
    let Some(cause) = op.bad_values.clone() else {
        return index_error_in_loss_call(si, tb);
    };
    let line = frame.line.map_or("?".to_string(), |l| l.to_string());
    let function = frame.function.as_deref().map_or(String::new(), |f| format!(", in {f}"));
    let hint = format!(
        "The log stops before the error message: the traceback ends inside {}, so the cause is read from its innermost frames, not from a message (low confidence). Paste the whole error to confirm it.",
        op.name
    );
    let text =
        format!("File \"{}\", line {line}{function} (the last frame before the log stops)", frame.file);
    let mut failure = cut(Strength::CutTraceback, Some(cause), hint, text, (si, frame.log_line), tb);
    failure.op = Some(op.name.clone());
    Some(failure)
}

/// A failure read from a traceback that stops before its message (low confidence).
pub(super) fn cut<'a>(
    strength: Strength,
    cause: Option<String>,
    hint: String,
    text: String,
    at: (usize, u64),
    tb: &'a Traceback,
) -> Failure<'a> {
    Failure {
        strength,
        cause,
        op: None,
        title: None,
        hint: Some(hint),
        values: Map::new(),
        text,
        at,
        traceback: Some(tb),
        assertion: None,
        followon: None,
        tolerant: false,
        stated_location: None,
    }
}

/// A cut IPython traceback whose header says `IndexError`, stopped inside a loss module
/// called on a target (`criterion(output, target)`, `loss_fn(...)`): the IndexError a
/// class-index loss raises is its target check (`Target 4 is out of bounds`). Low
/// confidence: the message, and so the loss, is not in the log.
pub(super) fn index_error_in_loss_call<'a>(si: usize, tb: &'a Traceback) -> Option<Failure<'a>> {
    static LOSS_CALL: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let loss_call = LOSS_CALL.get_or_init(|| {
        regex::Regex::new(r"(?i)\b(?:criterion|loss_fn|loss_func|loss_function|\w*_loss|\w*loss)\s*\(.*\b(?:target|label|labels|y|gt)\w*")
            .expect("the loss call pattern compiles")
    });
    if tb.header_type.as_deref() != Some("IndexError") {
        return None;
    }
    let frame = frames::user_frame(tb)?;
    frame.code.as_deref().filter(|code| loss_call.is_match(code))?;
    let line = frame.line.map_or("?".to_string(), |l| l.to_string());
    let hint = "The log stops before the error message: IPython's header says IndexError, and the last frame in your code calls a loss on the targets. A class-index loss raises IndexError for a target outside [0, C) (low confidence: the message is not in the log). Paste the whole error to confirm it.".to_string();
    let text = format!("IndexError in \"{}\", line {line} (the log stops before the message)", frame.file);
    Some(cut(
        Strength::CutTraceback,
        Some("target-out-of-range".into()),
        hint,
        text,
        (si, frame.log_line),
        tb,
    ))
}

/// A traceback that stops before its message inside no op the knowledge base knows: no
/// cause, but its deepest frame in the user's code, stated with low confidence. The
/// weakest failure: any error the log does show comes first.
pub(super) fn cut_unknown_failure<'a>(si: usize, tb: &'a Traceback) -> Failure<'a> {
    let last = tb.innermost().frames.last().or(tb.frames.last());
    let at = last.map_or(tb.log_line, |f| f.log_line);
    let hint = "The log stops before the error message and its last frames are in no op assertscope knows: the error's cause is not in the log (low confidence). Paste the whole error to get it explained.".to_string();
    cut(
        Strength::CutUnknown,
        None,
        hint,
        "(the traceback stops before its error message)".to_string(),
        (si, at),
        tb,
    )
}

/// What the frames of a traceback say about the op, and what bad values mean there.
pub(super) fn apply_frames(
    kb: &'static KnowledgeBase,
    f: &mut Failure<'_>,
    tb: &Traceback,
    synchronous: bool,
) {
    let bad_value_cause = f.cause.as_deref().is_some_and(is_bad_value_cause);
    match f.strength {
        // A synchronous traceback ends inside the op that raised; an index error inside
        // one_hot is a class target out of range.
        Strength::HostCheck | Strength::Assertion if bad_value_cause => {
            if let Some((op, cause)) = bad_value_op_in_frames(kb, tb).filter(|_| synchronous) {
                f.op = Some(op);
                f.cause = Some(cause);
            }
        }
        // Host-side checks raise at the call itself; an illegal access is only noticed later.
        Strength::HostCheck => {
            if let Some(op) =
                op_in_frames(kb, tb).filter(|_| f.cause.as_deref() != Some("illegal-memory-access"))
            {
                f.op = Some(op.name.clone());
            }
        }
        // A CUDA assert error with no assertion line in the log: synchronous and inside an
        // op that asserts on bad values, that op failed; otherwise the visible error only
        // follows an earlier failure, and the op is merely where it surfaced.
        Strength::StickyAssert if f.cause.as_deref().is_some_and(|c| c != "cascade") => {
            // The error named the kernel file that failed: its cause stands; the frames
            // may still say which of the file's ops it was.
            if let Some(op) = op_in_frames(kb, tb).filter(|o| o.bad_values == f.cause) {
                f.op = Some(op.name.clone());
            }
        }
        Strength::StickyAssert => {
            let op = op_in_frames(kb, tb);
            match op.and_then(|o| o.bad_values.clone()) {
                Some(cause) if synchronous => {
                    f.cause = Some(cause);
                    f.strength = Strength::HostCheck;
                }
                _ => f.cause = Some("cascade".into()),
            }
            f.op = op.map(|o| o.name.clone());
        }
        Strength::Cascade => f.op = op_in_frames(kb, tb).map(|o| o.name.clone()),
        _ => {}
    }
}

/// Whether a user-level op is one of those that reach an assertion site (its `ops`:
/// `F.one_hot`, `Tensor.index_select`, `tensor[idx] (...)`).
pub(super) fn site_reaches(site: &crate::kb::AssertSite, op: &str) -> bool {
    site.op == op
        || site.ops.iter().any(|entry| {
            let name = entry.split(" (").next().unwrap_or(entry);
            let last = name.rsplit('.').next().unwrap_or(name).trim_end_matches("()");
            last.eq_ignore_ascii_case(op)
                || last.trim_end_matches('_') == op.trim_end_matches('_')
                || (op == "index" && name.starts_with("tensor[idx]"))
        })
}

pub(super) fn is_bad_value_cause(cause: &str) -> bool {
    matches!(cause, "target-out-of-range" | "embedding-index-out-of-range" | "index-out-of-bounds")
}

/// The innermost op the frames show.
pub(super) fn op_in_frames(
    kb: &'static KnowledgeBase,
    tb: &Traceback,
) -> Option<&'static crate::kb::OpSignature> {
    frames::innermost_first(tb).into_iter().find_map(|frame| {
        let is_torch = frames::origin(&frame.file) == frames::Origin::Torch;
        kb.op_of_frame(frame.function.as_deref(), frame.code.as_deref(), is_torch)
    })
}

/// The innermost op the frames show that can meet bad index values, with what they mean.
pub(super) fn bad_value_op_in_frames(kb: &'static KnowledgeBase, tb: &Traceback) -> Option<(String, String)> {
    frames::innermost_first(tb).into_iter().find_map(|frame| {
        let is_torch = frames::origin(&frame.file) == frames::Origin::Torch;
        let op = kb.op_of_frame(frame.function.as_deref(), frame.code.as_deref(), is_torch)?;
        let cause = op.bad_values.as_deref().filter(|c| is_bad_value_cause(c))?;
        Some((op.name.clone(), cause.to_string()))
    })
}
