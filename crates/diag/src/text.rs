//! The one renderer of [`Diagnostic`]s for people, built on `annotate-snippets` (what
//! rustc and ruff draw with): gutters, carets under the span whatever the characters'
//! display width, labels, notes, then the wrapped `why` and `fix` paragraphs.
//!
//! `python/assertscope/_render.py` draws the same layout for the guard's exceptions;
//! `tests/render_parity.rs` checks the two agree.

use crate::model::{Diagnostic, Note, Severity, Span};
use crate::wrap::{wrap, wrap_lines};
use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use std::ops::Range;

/// Page width the `why` / `fix` paragraphs are wrapped to.
pub const WIDTH: usize = 100;

/// Renders diagnostics one after the other, separated by a blank line.
pub fn render(diagnostics: &[Diagnostic], color: bool) -> String {
    diagnostics.iter().map(|d| render_one(d, color)).collect::<Vec<_>>().join("\n")
}

/// Renders one diagnostic; the text ends with a newline.
pub fn render_one(d: &Diagnostic, color: bool) -> String {
    let renderer = if color { Renderer::styled() } else { Renderer::plain() };
    let pieces = pieces(&d.spans);
    let sources: Vec<(String, Vec<Range<usize>>)> = pieces
        .iter()
        .map(|piece| match piece {
            Piece::Snippet(lines) => snippet_source(lines),
            Piece::Header(_) => (String::new(), Vec::new()),
        })
        .collect();
    let mut group =
        Group::with_title(level(d.severity).primary_title(d.message.as_str()).id_opt(d.code.as_deref()));
    for (piece, (text, ranges)) in pieces.iter().zip(&sources) {
        group = with_piece(group, piece, text, ranges);
    }
    // Notes wrap to the page width under their first word, as the sections do: the lead
    // `   = kind: ` is as wide as the gutter (the longest line number) plus the name.
    let digits = pieces
        .iter()
        .filter_map(|piece| match piece {
            Piece::Snippet(lines) => lines.iter().map(|l| l.line.to_string().len()).max(),
            Piece::Header(_) => None,
        })
        .max()
        .unwrap_or(0);
    let wrapped = |kind: &str, text: &str| {
        let lead = digits + 3 + if kind.is_empty() { 0 } else { kind.chars().count() + 2 };
        wrap_lines(text, WIDTH.saturating_sub(lead).max(20)).join("\n")
    };
    let notes: Vec<String> = d.notes.iter().map(|n| wrapped(&n.kind, &n.text)).collect();
    let help = d.help.as_deref().map(|h| wrapped("help", h));
    for (note, text) in d.notes.iter().zip(&notes) {
        group = group.element(note_level(note).message(text.as_str()));
    }
    if let Some(help) = &help {
        group = group.element(Level::HELP.message(help.as_str()));
    }
    let mut out = renderer.render(&[group]);
    out.push('\n');
    if !d.sections.is_empty() {
        out.push('\n');
        out.push_str(&render_sections(&renderer, &d.sections));
        out.push('\n');
    }
    out
}

/// One piece of the spans added to the diagnostic's group: a snippet with its
/// annotations, or a `--> file:line` header with its label as a note.
fn with_piece<'a>(group: Group<'a>, piece: &'a Piece, text: &'a str, ranges: &[Range<usize>]) -> Group<'a> {
    match piece {
        Piece::Snippet(lines) => {
            let mut snippet = Snippet::source(text)
                .line_start(lines[0].line as usize)
                .path(lines[0].span.file.as_str())
                .fold(lines.len() > 1);
            for (line, range) in lines.iter().zip(ranges) {
                let kind = if line.span.primary { AnnotationKind::Primary } else { AnnotationKind::Context };
                let mut annotation = kind.span(range.clone());
                if let Some(label) = &line.span.label {
                    annotation = annotation.label(label.as_str());
                }
                snippet = snippet.annotation(annotation);
            }
            group.element(snippet)
        }
        Piece::Header(span) => {
            let origin = Origin::path(span.file.as_str());
            let origin = match span.line {
                Some(line) => origin.line(line as usize),
                None => origin,
            };
            let group = group.element(origin);
            match &span.label {
                Some(label) => group.element(Level::NOTE.message(label.as_str())),
                None => group,
            }
        }
    }
}

/// The paragraphs after the block (`why: …`, `fix: …`), each wrapped under its name.
fn render_sections(renderer: &Renderer, sections: &[Note]) -> String {
    let wrapped: Vec<String> = sections.iter().map(|s| wrap(&s.text, WIDTH - s.kind.len() - 2)).collect();
    let groups: Vec<Group> = sections
        .iter()
        .zip(&wrapped)
        .map(|(s, text)| Group::with_title(note_level(s).secondary_title(text.as_str())))
        .collect();
    renderer.render(&groups)
}

trait TitleId<'a> {
    fn id_opt(self, id: Option<&'a str>) -> Self;
}

impl<'a> TitleId<'a> for annotate_snippets::Title<'a> {
    fn id_opt(self, id: Option<&'a str>) -> Self {
        match id {
            Some(id) => self.id(id),
            None => self,
        }
    }
}

fn level(severity: Severity) -> Level<'static> {
    match severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Note => Level::NOTE,
    }
}

/// `help` and `fix` lines are drawn as help, a note without a kind as a bare `= text`,
/// everything else as a named note.
fn note_level(note: &Note) -> Level<'_> {
    match note.kind.as_str() {
        "" => Level::NOTE.no_name(),
        "note" => Level::NOTE,
        "help" => Level::HELP,
        "fix" => Level::HELP.with_name(Some("fix")),
        kind => Level::NOTE.with_name(Some(kind)),
    }
}

/// What the spans are drawn as: a source snippet (the spans of one file on different
/// lines, merged in line order, as rustc draws a value's origin above its use), or only a
/// `--> file:line` header for a span without source text.
enum Piece<'a> {
    Snippet(Vec<SourceLine<'a>>),
    Header(&'a Span),
}

/// A span's line, cut to fit a terminal, and the byte range to underline in it.
struct SourceLine<'a> {
    span: &'a Span,
    line: u64,
    text: String,
    range: Range<usize>,
    /// Text was left out: the line is drawn on its own.
    cut: bool,
}

fn pieces(spans: &[Span]) -> Vec<Piece<'_>> {
    // annotate-snippets fits the code into 140 cells less the gutter, which is as wide as
    // the longest line number of the whole diagnostic.
    let digits = spans
        .iter()
        .filter(|s| s.source.is_some())
        .filter_map(|s| s.line)
        .map(|l| l.to_string().len())
        .max()
        .unwrap_or(0);
    let fits = TERM_WIDTH - 3 - digits;
    let mut pieces: Vec<Piece> = Vec::new();
    for span in spans {
        let Some(line) = source_line(span, fits) else {
            pieces.push(Piece::Header(span));
            continue;
        };
        // A gap of one line is drawn as that line: it joins only when the file can give
        // it (the model does not hold its text). Wider gaps fold into `...`.
        let joins = |lines: &Vec<SourceLine>| {
            !line.cut
                && lines[0].span.file == span.file
                && lines.iter().all(|l| !l.cut && l.line.abs_diff(line.line) != 0)
                && {
                    let at = lines.partition_point(|l| l.line < line.line);
                    let before = at.checked_sub(1).map(|i| &lines[i]);
                    let after = lines.get(at);
                    before.is_none_or(|b| line.line - b.line != 2 || gap_line(b, &line, fits).is_some())
                        && after.is_none_or(|a| a.line - line.line != 2 || gap_line(&line, a, fits).is_some())
                }
        };
        match pieces.iter_mut().find_map(|p| match p {
            Piece::Snippet(lines) if joins(lines) => Some(lines),
            _ => None,
        }) {
            Some(lines) => {
                let at = lines.partition_point(|l| l.line < line.line);
                lines.insert(at, line);
            }
            None => pieces.push(Piece::Snippet(vec![line])),
        }
    }
    pieces
}

/// The lines of a snippet from its first to its last, blank where no span is, and each
/// span's byte range in that text.
fn snippet_source(lines: &[SourceLine]) -> (String, Vec<Range<usize>>) {
    let mut text = String::new();
    let mut ranges = Vec::new();
    let mut number = lines[0].line;
    for (i, line) in lines.iter().enumerate() {
        if i > 0 && line.line - number == 1 {
            text.push_str(&gap_line(&lines[i - 1], line, usize::MAX).unwrap_or_default());
        }
        while number < line.line {
            text.push('\n');
            number += 1;
        }
        ranges.push(text.len() + line.range.start..text.len() + line.range.end);
        text.push_str(&line.text);
        if i + 1 < lines.len() {
            text.push('\n');
            number += 1;
        }
    }
    (text, ranges)
}

/// The line between two spans' lines one apart, read from their file: only when the file
/// still holds both spans' lines as shown (not another version of it) and the line fits
/// uncut. `_render.py` fills the gap alike.
fn gap_line(before: &SourceLine, after: &SourceLine, fits: usize) -> Option<String> {
    let path = std::path::Path::new(before.span.file.as_str());
    let read = |line: u64| crate::model::read_line(path, line).map(|t| t.trim_end().to_string());
    if read(before.line)? != before.text || read(after.line)? != after.text {
        return None;
    }
    let text = read(before.line + 1)?;
    let (text, _, cut) = cut_long_line(text, 0..0, fits);
    (!cut).then_some(text)
}

/// The span's line without its newline and trailing blanks, cut to fit, and the byte
/// range to underline: the given columns, or the line's text without its indentation.
fn source_line(span: &Span, fits: usize) -> Option<SourceLine<'_>> {
    let line = span.line?;
    let text = span.source.as_deref()?.lines().next().unwrap_or("").trim_end().to_string();
    let range = match span.columns {
        Some((start, end)) => {
            let byte_at = |column: usize| {
                text.char_indices().nth(column.saturating_sub(1)).map_or(text.len(), |(i, _)| i)
            };
            let (start, end) = (byte_at(start), byte_at(end.max(start + 1)));
            start..end.max(start)
        }
        None => {
            let start = text.len() - text.trim_start().len();
            start..text.len()
        }
    };
    let (text, range, cut) = cut_long_line(text, range, fits);
    Some(SourceLine { span, line, text, range, cut })
}

/// The terminal width annotate-snippets fits source lines into, gutter included.
const TERM_WIDTH: usize = 140;
/// How much of a line too long for it is kept around the span.
const KEPT: usize = 90;
/// Text cut on the left becomes blanks, so that columns stay true; annotate-snippets
/// draws indentation as deep as this as `...`.
const DEEP_INDENT: usize = 27;

/// A line wider than `fits` cells, cut to [`KEPT`] cells around the span: what is
/// left out on the left becomes blanks (one per character, so the column in the header
/// stays true, and the renderer draws them as `...`), on the right `...`.
/// `_render.py` cuts alike.
fn cut_long_line(text: String, range: Range<usize>, fits: usize) -> (String, Range<usize>, bool) {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let cells: Vec<usize> = chars.iter().map(|&(_, c)| cell_width(c)).collect();
    if cells.iter().sum::<usize>() <= fits {
        return (text, range, false);
    }
    let char_at = |byte: usize| chars.iter().position(|&(i, _)| i >= byte).unwrap_or(chars.len());
    let (start, end) = (char_at(range.start), char_at(range.end));
    let before: usize = cells[..start].iter().sum();
    let span_cells: usize = cells[start..end].iter().sum();
    let mut left = if span_cells >= KEPT {
        start
    } else {
        let target = before.saturating_sub((KEPT - span_cells) / 2);
        let mut seen = 0;
        cells
            .iter()
            .take_while(|&&c| {
                let skip = seen + c <= target;
                seen += c;
                skip
            })
            .count()
    };
    if left < DEEP_INDENT {
        left = 0;
    }
    let mut right = left;
    let mut width = 0;
    while right < chars.len() && width + cells[right] <= KEPT {
        width += cells[right];
        right += 1;
    }
    let byte = |i: usize| chars.get(i).map_or(text.len(), |&(b, _)| b);
    let mut out = " ".repeat(left);
    out.push_str(&text[byte(left)..byte(right)]);
    let kept_end = out.len();
    if right < chars.len() {
        out.push_str("...");
    }
    let shift = |b: usize| (b - byte(left) + left).min(kept_end);
    let start = shift(byte(start.max(left)));
    let end = shift(byte(end.max(left))).max(start);
    (out, start..end, true)
}

/// Terminal cells of a character, as the renderer counts them (a tab is four).
fn cell_width(c: char) -> usize {
    match c {
        '\t' => 4,
        c => unicode_width::UnicodeWidthChar::width(c).unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(d: &Diagnostic) -> String {
        render_one(d, false)
    }

    #[test]
    fn carets_sit_under_wide_characters() {
        let source = "    return {\"损失\": F.cross_entropy(logits, column)}";
        let start = source[..source.find("column)").unwrap()].chars().count() + 1;
        let d = Diagnostic::new(Severity::Error, Some("AS102"), "target has shape [N, 1]").span(
            Span::at("wide.py", Some(5)).source(Some(source.into())).columns(start, start + 6).label("this"),
        );
        let out = plain(&d);
        let lines: Vec<&str> = out.lines().collect();
        let code = lines.iter().find(|l| l.starts_with("5 |")).unwrap();
        let carets = lines.iter().find(|l| l.contains('^')).unwrap();
        // Display columns: each CJK character takes two cells.
        let cells = |s: &str| {
            s.chars().map(|c| if ('\u{4e00}'..='\u{9fff}').contains(&c) { 2 } else { 1 }).sum::<usize>()
        };
        let column_of = |line: &str, needle: &str| cells(&line[..line.find(needle).unwrap()]);
        assert_eq!(column_of(code, "column)"), column_of(carets, "^"), "{out}");
        assert!(carets.contains("^^^^^^ this"), "{out}");
        assert!(out.contains("--> wide.py:5:"), "{out}");
    }

    #[test]
    fn a_span_without_source_is_a_header_and_its_label_a_note() {
        let d = Diagnostic::new(Severity::Warning, Some("x"), "m")
            .span(Span::at("labels.csv", Some(19)).label("in main"))
            .note("found", "3 of 4");
        let out = plain(&d);
        assert!(out.contains("--> labels.csv:19\n"), "{out}");
        assert!(out.contains("= note: in main"), "{out}");
        assert!(out.contains("= found: 3 of 4"), "{out}");
    }

    #[test]
    fn sections_are_wrapped_under_their_name() {
        let long = "word ".repeat(60);
        let d = Diagnostic::new(Severity::Error, None, "m").section("why", long.trim());
        let out = plain(&d);
        let why: Vec<&str> = out.lines().skip_while(|l| !l.starts_with("why: ")).collect();
        assert!(why.len() >= 3, "{out}");
        assert!(why.iter().all(|l| l.chars().count() <= WIDTH), "{out}");
        assert!(why[1].starts_with("     word"), "{out}");
    }

    #[test]
    fn odd_spans_render_without_panicking() {
        let spans = [
            Span::at("a.py", Some(0)).source(Some(String::new())),
            Span::at("a.py", Some(1)).source(Some("x".into())).columns(0, 0),
            Span::at("a.py", Some(2)).source(Some("x = 1".into())).columns(50, 3),
            Span::at("a.py", Some(u64::MAX)).source(Some("\u{1b}[31mred\r\n\tnext".into())),
            Span::at("", None).label("multi\nline"),
        ];
        for span in spans {
            let d = Diagnostic::new(Severity::Error, Some(""), "").span(span).note("k", "\u{0}").help("");
            assert!(plain(&d).starts_with("error"));
        }
    }
}
