//! How a value got where a question found it, as places in files: the secondary spans of a
//! lint finding ("defined here", "passed here"), before and after they are located.

use ruff_text_size::TextRange;
use serde::Serialize;

/// One located secondary span.
#[derive(Debug, Clone, Serialize)]
pub struct Related {
    /// The file: the one being analysed, or a local module it imports.
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    pub label: String,
    /// The source line of the start, for rendering: the whole line, or on a very long line
    /// a window around the column that starts at character `source_line_start` (0-based).
    #[serde(skip)]
    pub source_line: String,
    #[serde(skip)]
    pub source_line_start: usize,
}

/// Where a piece of evidence is: a range of the file being analysed, or a place already
/// located in another file (a local module the file imports).
#[derive(Debug, Clone)]
pub enum Place {
    Here(TextRange),
    Elsewhere(Related),
}

/// One step of an evidence chain, before it is located.
#[derive(Debug, Clone)]
pub struct Evidence {
    pub place: Place,
    pub label: String,
}
