//! Lines that a terminal or a forum wrapped: a traceback frame or an assertion line broken
//! in two is held back and rejoined with the next line when that line continues it.
//!
//! Only lines whose shape says they are unfinished are held, and a line is only joined
//! when the result is a well-formed frame or the rest of an assertion, so clean logs parse
//! exactly as before.

use super::traceback;
use regex::Regex;
use std::sync::OnceLock;

/// A frame line shorter than this cannot have been wrapped by any terminal.
const SHORTEST_WRAPPED_FRAME: usize = 50;
/// Longest text assembled from wrapped pieces.
const LONGEST_JOINED: usize = 8000;

fn assertion_place() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^\S+\.(?:cu|cuh|h|hpp|cpp|c)\s?:\d+:").unwrap())
}

fn frame_function() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^[\w.<>]+$").unwrap())
}

fn is_frame_line(text: &str) -> bool {
    text.trim_start().starts_with("File \"")
}

fn is_unfinished_assertion(text: &str) -> bool {
    let trimmed = text.trim_start();
    if trimmed.contains("Assertion failed: `") {
        return false;
    }
    match trimmed.find("Assertion `") {
        Some(i) => !trimmed[i..].contains("` failed"),
        None => assertion_place().is_match(trimmed),
    }
}

/// Whether the line may go on in the next line: a long frame line, or an assertion line
/// without its end.
pub fn may_continue(text: &str) -> bool {
    if text.len() > LONGEST_JOINED {
        return false;
    }
    (is_frame_line(text)
        && (traceback::python_frame(text, 0).is_none() || text.len() >= SHORTEST_WRAPPED_FRAME))
        || is_unfinished_assertion(text)
}

/// Whether a line begins something of its own, and so cannot be the rest of another.
fn starts_record(text: &str) -> bool {
    let trimmed = text.trim_start();
    trimmed.is_empty()
        || trimmed.starts_with("File \"")
        || traceback::header_style(text).is_some()
        || assertion_place().is_match(trimmed)
        || (trimmed.contains("Assertion `") && !text.starts_with(' ') && trimmed.starts_with(['/', '.', '[']))
}

/// The held line and the next one as one line, when the next line continues it.
pub fn rejoin(held: &str, next: &str) -> Option<String> {
    if starts_record(next) {
        return None;
    }
    if is_frame_line(held) {
        let complete = traceback::python_frame(held, 0).is_some();
        for sep in ["", " "] {
            let candidate = format!("{held}{sep}{}", next.trim_start());
            if let Some(frame) = traceback::python_frame(&candidate, 0) {
                let plausible = frame.function.as_deref().is_none_or(|f| frame_function().is_match(f));
                if plausible {
                    return Some(candidate);
                }
            }
        }
        // A path so long that it took more than two lines.
        if !complete && !next.starts_with(' ') && !next.contains(' ') {
            return Some(format!("{held}{next}"));
        }
        return None;
    }
    if is_unfinished_assertion(held) {
        return Some(format!("{held}{next}"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejoins_a_frame_wrapped_at_any_column() {
        let line = "  File \"/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py\", line 1501, in _call_impl";
        for width in [40, 60, 80, 100] {
            let (a, b) = line.split_at(width);
            assert!(may_continue(a), "{width}");
            assert_eq!(rejoin(a, b).as_deref(), Some(line), "{width}");
        }
    }

    #[test]
    fn does_not_swallow_the_code_line() {
        let frame = "  File \"/home/someone/projects/classifier/train_classifier.py\", line 48, in main";
        assert!(may_continue(frame));
        assert_eq!(rejoin(frame, "    loss = criterion(out, y)"), None);
        assert_eq!(rejoin(frame, "loss = criterion(out, y)"), None);
        assert_eq!(rejoin(frame, "  File \"/x.py\", line 3, in f"), None);
    }

    #[test]
    fn rejoins_an_assertion_line() {
        let a = "/pytorch/aten/src/THCUNN/ClassNLLCriterion.cu:108: cunn_ClassNLLCriterion_updateOutput_kernel: block: [0,0,0], thread: [0,0";
        let b = ",0] Assertion `t >= 0 && t < n_classes` failed.";
        assert!(may_continue(a));
        assert_eq!(rejoin(a, b), Some(format!("{a}{b}")));
        let next = "/pytorch/aten/src/THCUNN/ClassNLLCriterion.cu:108: cunn_ClassNLLCriterion_updateOutput_kernel: block";
        assert_eq!(rejoin(a, next), None);
        assert!(!may_continue("x.cu:3: k: block: [0,0,0], thread: [0,0,0] Assertion `a` failed."));
    }
}
