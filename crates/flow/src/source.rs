//! The front end: one file's text parsed by Ruff's parser, which recovers from syntax errors
//! and still returns the whole module, with a line index to locate ranges.

use crate::evidence::Related;
use ruff_python_ast::{ModModule, PySourceType, Stmt};
use ruff_python_parser::Parsed;
use ruff_source_file::LineIndex;
use ruff_text_size::{TextRange, TextSize};

pub struct SourceFile<'a> {
    text: &'a str,
    parsed: Parsed<ModModule>,
    lines: LineIndex,
    /// Where the text nests too deeply to be parsed, if it does: it is then left unparsed
    /// (an empty module).
    too_deep: Option<TextSize>,
}

impl<'a> SourceFile<'a> {
    pub fn parse(text: &'a str) -> SourceFile<'a> {
        let too_deep = crate::nesting::too_deep(text, crate::nesting::MAX_NESTING)
            .map(|at| TextSize::try_from(at).unwrap_or(TextSize::new(u32::MAX)));
        let parsed = ruff_python_parser::parse_unchecked_source(
            if too_deep.is_some() { "" } else { text },
            PySourceType::Python,
        );
        SourceFile { text, parsed, lines: LineIndex::from_source_text(text), too_deep }
    }

    /// Where the text nests too deeply to be parsed, if it does.
    pub fn too_deep(&self) -> Option<TextSize> {
        self.too_deep
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

    /// The byte range of 1-based line `line`, without its line ending.
    pub fn line_span(&self, line: usize) -> std::ops::Range<usize> {
        let Some(one) = ruff_source_file::OneIndexed::new(line) else { return 0..0 };
        let range = self.lines.line_range(one, self.text);
        let text = &self.text[range];
        let content = text.trim_end_matches(['\n', '\r']);
        usize::from(range.start())..usize::from(range.start()) + content.len()
    }

    /// Locates a range of this file: its start and end as 1-based line and character
    /// column, and the start's line as shown (a window around it on a very long line).
    pub fn locate_related(&self, path: &str, range: TextRange, label: String) -> Related {
        let start = self.lines.line_column(range.start(), self.text);
        let end = self.lines.line_column(range.end(), self.text);
        let line = self.line_span(start.line.get());
        let (source_line, source_line_start) =
            window(&self.text[line.clone()], usize::from(range.start()) - line.start, start.column.get() - 1);
        Related {
            path: path.to_string(),
            line: start.line.get(),
            column: start.column.get(),
            end_line: end.line.get(),
            end_column: end.column.get(),
            label,
            source_line,
            source_line_start,
        }
    }

    /// Frees the syntax tree. Dropping it recurses once per nesting level, so a tree nested
    /// deeper than any real code (only generated or hostile input gets there) is taken apart
    /// into shallow pieces first ([`crate::dismantle`]).
    pub fn dispose(self, nested_too_deep: bool) {
        if nested_too_deep {
            crate::dismantle::drop_deep(self.parsed.into_syntax());
        }
    }
}

/// Lines longer than this (minified or generated code) are shown as a window around the column.
const MAX_SHOWN_LINE: usize = 240;

/// The part of `line` to show for a finding at byte `offset` (character `column`) of it, and
/// the character the part starts at. Every finding keeps its own copy, so a huge line is
/// never copied or scanned whole.
fn window(line: &str, offset: usize, column: usize) -> (String, usize) {
    if line.len() <= MAX_SHOWN_LINE {
        return (line.to_string(), 0);
    }
    let offset = offset.min(line.len());
    let mut from = offset.saturating_sub(MAX_SHOWN_LINE / 3);
    while !line.is_char_boundary(from) {
        from -= 1;
    }
    let mut to = (from + MAX_SHOWN_LINE).min(line.len());
    while !line.is_char_boundary(to) {
        to -= 1;
    }
    let skipped_chars = line[from..offset].chars().count();
    (line[from..to].to_string(), column.saturating_sub(skipped_chars))
}
