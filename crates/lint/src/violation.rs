//! One problem found in one file, located for people and tools: what every output writes.

use crate::fix::Applicability;
use crate::fix::Fix;
use crate::rule_doc::Severity;
use assertscope_diag::{Diagnostic, Span};
use assertscope_flow::Related;
use serde::Serialize;

/// The code syntax errors are reported under; not a rule, so never deselected.
pub const SYNTAX_ERROR: &str = "syntax-error";

/// One problem found in one file, located for people and tools.
#[derive(Debug, Clone, Serialize)]
pub struct Violation {
    pub code: &'static str,
    pub severity: Severity,
    pub path: String,
    /// 1-based line and column (in characters) of the start, and of the end.
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
    /// The cause id (causes.toml) this finding would end in.
    pub cause: Option<&'static str>,
    /// The source line of the start, for rendering: the whole line, or on a very long line a
    /// window around the column that starts at character `source_line_start` (0-based).
    #[serde(skip)]
    pub source_line: String,
    #[serde(skip)]
    pub source_line_start: usize,
    /// The evidence chain, as rustc's secondary labels: where the value was made and the
    /// steps it took to the primary span ("defined here", "flows here"), in source order of
    /// the chain, primary span excluded.
    pub related: Vec<Related>,
    /// The fix, when the rule can write one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<Fix>,
}

impl Violation {
    /// The finding in assertscope's one finding model: the span on its source line, the
    /// evidence chain as secondary spans, then the fix and the help.
    pub fn diagnostic(&self) -> Diagnostic {
        let f = self;
        let primary = source_span(
            &f.path,
            f.line,
            f.column,
            f.end_line,
            f.end_column,
            &f.source_line,
            f.source_line_start,
        );
        let mut d = Diagnostic::new(f.severity, Some(f.code), f.message.as_str()).span(primary);
        // The evidence chain ("defined here", "flows here"): secondary spans, as rustc shows them.
        for r in &f.related {
            let span = source_span(
                &r.path,
                r.line,
                r.column,
                r.end_line,
                r.end_column,
                &r.source_line,
                r.source_line_start,
            );
            d = d.span(span.label(r.label.as_str()).secondary());
        }
        if let Some(fix) = &f.fix {
            let how = match fix.applicability {
                Applicability::Safe => "applied by --fix",
                Applicability::Unsafe => "unsafe: applied by --fix --unsafe-fixes",
                Applicability::DisplayOnly => "shown only: review and apply it by hand",
            };
            d = d.note("fix", format!("{} ({how})", fix.message));
        }
        match &f.help {
            Some(help) => d.help(help.as_str()),
            None => d,
        }
    }
}

/// A span over columns `column..end_column` of a source line (`end_line` past `line`: to
/// the end of it).
fn source_span(
    path: &str,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    source_line: &str,
    source_line_start: usize,
) -> Span {
    // A very long line was kept as a window that starts at `source_line_start`; blanks in
    // front of it keep the columns true, and the renderer shows only the part around the span.
    let source = format!("{}{}", " ".repeat(source_line_start), source_line.trim_end());
    let line_chars = source.chars().count();
    let end = if end_line == line { end_column.min(line_chars + 1) } else { line_chars + 1 };
    Span::at(path, Some(line as u64)).source(Some(source)).columns(column, end.max(column + 1))
}
