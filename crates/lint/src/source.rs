//! The front end: one file's text parsed by Ruff's parser ([`SourceFile`], shared with the
//! flow engine), and a finding located in it as a [`Violation`].

use crate::rule_doc::Severity;
use crate::violation::Violation;
pub use assertscope_flow::source::SourceFile;
use assertscope_flow::{Evidence, Place, Related};
use ruff_text_size::TextRange;

/// A finding of rule `code` at `range` of `parsed`, located for people and tools.
#[allow(clippy::too_many_arguments)]
pub fn locate(
    parsed: &SourceFile,
    path: &str,
    code: &'static str,
    severity: Severity,
    range: TextRange,
    message: String,
    help: Option<String>,
    cause: Option<&'static str>,
) -> Violation {
    let at = parsed.locate_related(path, range, String::new());
    Violation {
        code,
        severity,
        path: at.path,
        line: at.line,
        column: at.column,
        end_line: at.end_line,
        end_column: at.end_column,
        message,
        help,
        cause,
        source_line: at.source_line,
        source_line_start: at.source_line_start,
        related: Vec::new(),
        fix: None,
    }
}

/// Locates a finding's evidence, leaving out steps on the primary span itself and repeats.
pub fn locate_evidence(
    parsed: &SourceFile,
    path: &str,
    primary: TextRange,
    evidence: Vec<Evidence>,
) -> Vec<Related> {
    let mut out: Vec<Related> = Vec::new();
    for step in evidence {
        let related = match step.place {
            Place::Here(range) if range == primary || primary.contains_range(range) => continue,
            Place::Here(range) => parsed.locate_related(path, range, step.label),
            Place::Elsewhere(mut related) => {
                related.label = step.label;
                related
            }
        };
        let same =
            |r: &Related| r.path == related.path && r.line == related.line && r.column == related.column;
        if !out.iter().any(same) {
            out.push(related);
        }
    }
    out
}
