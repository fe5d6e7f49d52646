//! One model of a finding, shared by every command: what `explain`, `run`, `check`,
//! `scan`, `lint` and the guard report to a person is a list of [`Diagnostic`]s, drawn by
//! one renderer ([`crate::text`]). The Python package renders the same model
//! (`assertscope/_render.py`), from the same JSON form, and a test checks that both
//! draw it alike.
//!
//! The model is presentation: the machine-readable contracts (`assertscope.diagnosis/1`,
//! lint's JSON and SARIF) are built from the commands' own data, not from this.

use serde::{Deserialize, Serialize};

/// How bad a finding is. Ordered from least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Note,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// One finding, as a person reads it:
///
/// ```text
/// error[code]: message
///   --> file:line:column             (primary span)
///    |
/// 12 |     source line
///    |     ^^^^^^^^^^^ label
///    |
///   ::: other.py:3:1                 (secondary spans: where a value came from)
///    = kind: note text               (notes, then help)
/// why: explanation                   (sections, wrapped)
/// fix: the fix
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// The taxonomy cause id or the lint rule code.
    pub code: Option<String>,
    pub message: String,
    /// The primary span first (where it failed), then secondary spans (origins, evidence).
    #[serde(default)]
    pub spans: Vec<Span>,
    /// `= kind: text` lines under the spans: evidence, values, tensors.
    #[serde(default)]
    pub notes: Vec<Note>,
    /// `= help: text`: the fix for this very case, in one line.
    #[serde(default)]
    pub help: Option<String>,
    /// Paragraphs after the block (`why: …`, `fix: …`), wrapped to the page width.
    #[serde(default)]
    pub sections: Vec<Note>,
}

/// A place in a file. `primary` spans mark where the problem is; the others where it
/// came from. Without `source` only the `--> file:line` header is drawn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    pub file: String,
    pub line: Option<u64>,
    /// The text of the line (without its newline), when known.
    #[serde(default)]
    pub source: Option<String>,
    /// 1-based character columns `[start, end)` within `source`; `None` underlines the
    /// line's text without its indentation.
    #[serde(default)]
    pub columns: Option<(usize, usize)>,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default = "primary_by_default")]
    pub primary: bool,
}

fn primary_by_default() -> bool {
    true
}

/// A labelled line of text: `kind` is drawn as the line's name (`note`, `help`, `op`,
/// `found`, `why`, `fix`, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    pub kind: String,
    pub text: String,
}

impl Note {
    pub fn new(kind: impl Into<String>, text: impl Into<String>) -> Note {
        Note { kind: kind.into(), text: text.into() }
    }
}

impl Diagnostic {
    pub fn new(severity: Severity, code: Option<&str>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity,
            code: code.map(str::to_string),
            message: message.into(),
            spans: Vec::new(),
            notes: Vec::new(),
            help: None,
            sections: Vec::new(),
        }
    }

    pub fn span(mut self, span: Span) -> Diagnostic {
        self.spans.push(span);
        self
    }

    pub fn note(mut self, kind: impl Into<String>, text: impl Into<String>) -> Diagnostic {
        self.notes.push(Note::new(kind, text));
        self
    }

    pub fn help(mut self, text: impl Into<String>) -> Diagnostic {
        self.help = Some(text.into());
        self
    }

    pub fn section(mut self, kind: impl Into<String>, text: impl Into<String>) -> Diagnostic {
        self.sections.push(Note::new(kind, text));
        self
    }
}

impl Span {
    /// A primary span at `file:line`, with no source text yet.
    pub fn at(file: impl Into<String>, line: Option<u64>) -> Span {
        Span { file: file.into(), line, source: None, columns: None, label: None, primary: true }
    }

    pub fn source(mut self, text: Option<String>) -> Span {
        self.source = text;
        self
    }

    pub fn columns(mut self, start: usize, end: usize) -> Span {
        self.columns = Some((start, end));
        self
    }

    pub fn label(mut self, label: impl Into<String>) -> Span {
        self.label = Some(label.into());
        self
    }

    pub fn secondary(mut self) -> Span {
        self.primary = false;
        self
    }
}

/// Longest source line kept for a span: a longer line (minified code, one huge CSV row)
/// is cut here, and the renderer shows the part around the span.
const MAX_LINE_BYTES: usize = 4096;

/// Line `line` (1-based) of a text file, without its line break, read as a stream so a
/// large file costs no memory; `None` when the file or the line is not there.
pub fn read_line(path: &std::path::Path, line: u64) -> Option<String> {
    use std::io::{BufRead, Read};
    let mut reader = std::io::BufReader::new(std::fs::File::open(path).ok()?);
    for _ in 1..line {
        if reader.skip_until(b'\n').ok()? == 0 {
            return None;
        }
    }
    let mut buf = Vec::new();
    reader.by_ref().take(MAX_LINE_BYTES as u64).read_until(b'\n', &mut buf).ok()?;
    if buf.is_empty() || line == 0 {
        return None;
    }
    let text = String::from_utf8_lossy(&buf);
    Some(text.trim_end_matches(['\n', '\r']).to_string())
}

#[cfg(test)]
mod tests {
    use super::read_line;

    #[test]
    fn read_line_finds_the_line_and_cuts_a_huge_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels.csv");
        let huge = "9".repeat(100_000);
        std::fs::write(&path, format!("label\r\n1\r\n{huge}\n")).unwrap();
        assert_eq!(read_line(&path, 2).as_deref(), Some("1"));
        assert_eq!(read_line(&path, 3).map(|l| l.len()), Some(super::MAX_LINE_BYTES));
        assert_eq!(read_line(&path, 4), None);
        assert_eq!(read_line(&path, 0), None);
        assert_eq!(read_line(&dir.path().join("missing.csv"), 1), None);
    }
}
