//! What a fix is (edits on the source's byte ranges, and how far they can be trusted), and
//! applying a set of fixes in one pass.

use ruff_text_size::{Ranged, TextRange};
use serde::Serialize;

/// How far a fix can be trusted, least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Applicability {
    /// Shown with the finding, never applied: it needs a choice only a person can make.
    DisplayOnly,
    /// Applied with `--unsafe-fixes`: it does what the code meant in the usual case, but may
    /// change what the program computes (a loss, which samples train).
    Unsafe,
    /// Applied with `--fix`: the code did not run as written (it would assert), and the
    /// fix is what the code meant.
    Safe,
}

impl Applicability {
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::DisplayOnly => "display-only",
            Applicability::Unsafe => "unsafe",
            Applicability::Safe => "safe",
        }
    }
}

/// One fix of one finding: its edits are applied together or not at all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fix {
    pub applicability: Applicability,
    /// What the fix does, in a few words ("squeeze the target to shape \[N\]").
    pub message: String,
    /// Sorted by start; never overlapping.
    pub edits: Vec<Edit>,
}

impl Fix {
    pub fn new(applicability: Applicability, message: impl Into<String>, mut edits: Vec<Edit>) -> Fix {
        edits.sort_by_key(|e| (e.start, e.end));
        Fix { applicability, message: message.into(), edits }
    }

    /// Whether `--fix` (with `unsafe_fixes` for `--unsafe-fixes`) applies it.
    pub fn applies(&self, unsafe_fixes: bool) -> bool {
        match self.applicability {
            Applicability::Safe => true,
            Applicability::Unsafe => unsafe_fixes,
            Applicability::DisplayOnly => false,
        }
    }
}

/// Replace bytes `start..end` of the source with `content` (an insertion when they are
/// equal, a deletion when `content` is empty).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub content: String,
}

impl Edit {
    pub fn replace(range: TextRange, content: impl Into<String>) -> Edit {
        Edit { start: range.start().into(), end: range.end().into(), content: content.into() }
    }

    pub fn insert_at(offset: ruff_text_size::TextSize, content: impl Into<String>) -> Edit {
        Edit { start: offset.into(), end: offset.into(), content: content.into() }
    }

    pub fn delete(range: TextRange) -> Edit {
        Edit::replace(range, "")
    }

    /// The edit as a node's replacement (`Edit::of(&node, "x")`).
    pub fn of(node: &impl Ranged, content: impl Into<String>) -> Edit {
        Edit::replace(node.range(), content)
    }
}

/// Applies `fixes` to `text` in one pass, in source order, leaving out any fix that overlaps
/// one already taken (the next round, on the new text, finds it again if it still applies)
/// and repeats of a fix already taken. Returns the new text and how many fixes were applied.
pub fn apply(text: &str, fixes: &[&Fix]) -> (String, usize) {
    let mut order: Vec<&Fix> = fixes.iter().copied().filter(|f| !f.edits.is_empty()).collect();
    order.sort_by_key(|f| (f.edits[0].start, f.edits[0].end));
    let mut taken: Vec<&Fix> = Vec::new();
    let mut last_end = 0usize;
    for fix in order {
        if taken.iter().any(|t| t.edits == fix.edits) {
            continue;
        }
        let fits = fix.edits.iter().all(|e| e.start <= e.end && e.end <= text.len())
            && fix.edits.windows(2).all(|w| w[0].end <= w[1].start)
            && (taken.is_empty() || fix.edits[0].start >= last_end)
            && fix.edits.iter().all(|e| text.is_char_boundary(e.start) && text.is_char_boundary(e.end));
        if !fits {
            continue;
        }
        last_end = fix.edits.last().map_or(last_end, |e| e.end.max(last_end));
        taken.push(fix);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for edit in taken.iter().flat_map(|f| f.edits.iter()) {
        out.push_str(&text[at..edit.start]);
        out.push_str(&edit.content);
        at = edit.end;
    }
    out.push_str(&text[at..]);
    (out, taken.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(edits: Vec<Edit>) -> Fix {
        Fix::new(Applicability::Safe, "t", edits)
    }

    #[test]
    fn edits_apply_in_order_and_overlaps_wait_for_the_next_round() {
        let text = "loss(out, y)  # keep\n";
        let squeeze = fix(vec![Edit { start: 10, end: 11, content: "y.squeeze(1)".into() }]);
        let overlapping = fix(vec![Edit { start: 10, end: 12, content: "z".into() }]);
        let insert = fix(vec![Edit { start: 0, end: 0, content: "x = 1\n".into() }]);
        let (out, n) = apply(text, &[&squeeze, &overlapping, &insert, &squeeze]);
        assert_eq!(n, 2);
        assert_eq!(out, "x = 1\nloss(out, y.squeeze(1))  # keep\n");
    }
}
