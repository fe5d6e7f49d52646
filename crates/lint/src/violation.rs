//! One problem found in one file, located for people and tools: what every output writes.

use crate::fix::Fix;
use crate::rule_doc::Severity;
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
