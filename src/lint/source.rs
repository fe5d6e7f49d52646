//! The front end: one file's text parsed by Ruff's parser, which recovers from syntax errors
//! and still returns the whole module, with a line index to locate findings.

use super::{Finding, Severity};
use ruff_python_ast::{ModModule, PySourceType, Stmt};
use ruff_python_parser::Parsed;
use ruff_source_file::LineIndex;
use ruff_text_size::{TextRange, TextSize};

pub struct SourceFile<'a> {
    text: &'a str,
    parsed: Parsed<ModModule>,
    lines: LineIndex,
}

impl<'a> SourceFile<'a> {
    pub fn parse(text: &'a str) -> SourceFile<'a> {
        let parsed = ruff_python_parser::parse_unchecked_source(text, PySourceType::Python);
        SourceFile { text, parsed, lines: LineIndex::from_source_text(text) }
    }

    pub fn text(&self) -> &'a str {
        self.text
    }

    pub fn suite(&self) -> &[Stmt] {
        &self.parsed.syntax().body
    }

    pub fn parsed(&self) -> &Parsed<ModModule> {
        &self.parsed
    }

    /// Every syntax error, with its range and the parser's message.
    pub fn syntax_errors(&self) -> impl Iterator<Item = (TextRange, String)> + '_ {
        self.parsed.errors().iter().map(|e| (e.location, e.error.to_string()))
    }

    /// The 1-based line of an offset.
    pub fn line_of(&self, offset: TextSize) -> usize {
        self.lines.line_index(offset).get()
    }

    /// The text of 1-based line `line`, without its line ending.
    pub fn line_text(&self, line: usize) -> &'a str {
        let Some(one) = ruff_source_file::OneIndexed::new(line) else { return "" };
        let start = self.lines.line_start(one, self.text);
        let rest = &self.text[usize::from(start)..];
        let end = rest.find(['\n', '\r']).unwrap_or(rest.len());
        &rest[..end]
    }

    #[allow(clippy::too_many_arguments)]
    pub fn locate(
        &self,
        path: &str,
        code: &'static str,
        severity: Severity,
        range: TextRange,
        message: String,
        help: Option<String>,
        cause: Option<&'static str>,
    ) -> Finding {
        let start = self.lines.line_column(range.start(), self.text);
        let end = self.lines.line_column(range.end(), self.text);
        Finding {
            code,
            severity,
            path: path.to_string(),
            line: start.line.get(),
            column: start.column.get(),
            end_line: end.line.get(),
            end_column: end.column.get(),
            message,
            help,
            cause,
            source_line: self.line_text(start.line.get()).to_string(),
        }
    }

    /// Frees the syntax tree. A tree nested deeper than any real code (thousands of levels,
    /// only made by generated or hostile input) is leaked instead: dropping it recurses once
    /// per level and could overflow the stack.
    pub fn dispose(self, nested_too_deep: bool) {
        if nested_too_deep {
            std::mem::forget(self.parsed);
        }
    }
}
