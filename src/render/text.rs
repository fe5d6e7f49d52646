//! The one renderer of [`Diagnostic`]s for people, built on `annotate-snippets` (what
//! rustc and ruff draw with): gutters, carets under the span whatever the characters'
//! display width, labels, notes, then the wrapped `why` and `fix` paragraphs.
//!
//! `python/assertscope/_render.py` draws the same layout for the guard's exceptions;
//! `tests/render_parity.rs` checks the two agree.

use crate::diagnostic::{Diagnostic, Note, Severity, Span};
use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};

/// Page width the `why` / `fix` paragraphs are wrapped to.
pub const WIDTH: usize = 100;

/// Renders diagnostics one after the other, separated by a blank line.
pub fn render(diagnostics: &[Diagnostic], color: bool) -> String {
    diagnostics.iter().map(|d| render_one(d, color)).collect::<Vec<_>>().join("\n")
}

/// Renders one diagnostic; the text ends with a newline.
pub fn render_one(d: &Diagnostic, color: bool) -> String {
    let renderer = if color { Renderer::styled() } else { Renderer::plain() };
    let sources: Vec<Option<(String, std::ops::Range<usize>)>> =
        d.spans.iter().map(source_and_range).collect();
    let mut group =
        Group::with_title(level(d.severity).primary_title(d.message.as_str()).id_opt(d.code.as_deref()));
    for (span, source) in d.spans.iter().zip(&sources) {
        group = match (source, span.line) {
            (Some((text, range)), Some(line)) => {
                let kind = if span.primary { AnnotationKind::Primary } else { AnnotationKind::Context };
                let mut annotation = kind.span(range.clone());
                if let Some(label) = &span.label {
                    annotation = annotation.label(label.as_str());
                }
                group.element(
                    Snippet::source(text.as_str())
                        .line_start(line as usize)
                        .path(span.file.as_str())
                        .fold(false)
                        .annotation(annotation),
                )
            }
            _ => {
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
        };
    }
    for note in &d.notes {
        group = group.element(note_level(note).message(note.text.as_str()));
    }
    if let Some(help) = &d.help {
        group = group.element(Level::HELP.message(help.as_str()));
    }
    let mut out = renderer.render(&[group]);
    out.push('\n');
    if !d.sections.is_empty() {
        let wrapped: Vec<String> =
            d.sections.iter().map(|s| wrap(&s.text, WIDTH - s.kind.len() - 2)).collect();
        let groups: Vec<Group> = d
            .sections
            .iter()
            .zip(&wrapped)
            .map(|(s, text)| Group::with_title(note_level(s).secondary_title(text.as_str())))
            .collect();
        out.push('\n');
        out.push_str(&renderer.render(&groups));
        out.push('\n');
    }
    out
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

/// The span's line without its newline and trailing blanks, and the byte range to
/// underline: the given columns, or the line's text without its indentation.
fn source_and_range(span: &Span) -> Option<(String, std::ops::Range<usize>)> {
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
    Some((text, range))
}

/// Words of `text` in lines of at most `width` characters; paragraphs (separated by a
/// blank line) start on a new line.
pub fn wrap(text: &str, width: usize) -> String {
    let mut lines = Vec::new();
    for paragraph in text.split("\n\n").map(str::trim).filter(|p| !p.is_empty()) {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.push(line);
    }
    lines.join("\n")
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
