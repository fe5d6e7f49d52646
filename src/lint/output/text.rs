//! rustc-style text: `path:line:col: CODE message`, the source line with the span underlined,
//! then the fix.

use crate::lint::walk::Outcome;
use crate::lint::{Finding, Severity};
use crate::render::style::Palette;
use std::io::{self, Write};

pub fn write_text(out: &mut dyn Write, outcome: &Outcome, palette: &Palette) -> io::Result<()> {
    for finding in &outcome.findings {
        write_finding(out, finding, palette)?;
    }
    let errors = outcome.findings.iter().filter(|f| f.severity == Severity::Error).count();
    let warnings = outcome.findings.len() - errors;
    let files = match outcome.files {
        1 => "1 file".to_string(),
        n => format!("{n} files"),
    };
    if outcome.files == 0 && !outcome.unreadable.is_empty() {
        // Nothing was linted: the errors on stderr say why, and a summary would only mislead.
    } else if outcome.findings.is_empty() {
        writeln!(out, "{}no problems found{} in {files}", palette.bold, palette.reset)?;
    } else {
        let plural = |n: usize, word: &str| if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") };
        writeln!(
            out,
            "{}found {}{} ({}, {}) in {files}",
            palette.bold,
            plural(outcome.findings.len(), "problem"),
            palette.reset,
            plural(errors, "error"),
            plural(warnings, "warning"),
        )?;
    }
    Ok(())
}

fn write_finding(out: &mut dyn Write, f: &Finding, p: &Palette) -> io::Result<()> {
    let colour = if f.severity == Severity::Error { p.error } else { p.warning };
    writeln!(
        out,
        "{}{}:{}:{}:{} {colour}{}{} {}",
        p.bold, f.path, f.line, f.column, p.reset, f.code, p.reset, f.message
    )?;
    // Like rustc: the primary span underlined with `^`, the evidence in the same file with `-`
    // and its label, all in line order; evidence in other files under a `:::` header.
    let primary = Span {
        line: f.line,
        column: f.column,
        end_line: f.end_line,
        end_column: f.end_column,
        source_line: &f.source_line,
        source_line_start: f.source_line_start,
        label: None,
    };
    let mut here: Vec<Span> = vec![primary];
    let mut elsewhere: Vec<(&str, Span)> = Vec::new();
    for r in &f.related {
        let span = Span {
            line: r.line,
            column: r.column,
            end_line: r.end_line,
            end_column: r.end_column,
            source_line: &r.source_line,
            source_line_start: r.source_line_start,
            label: Some(&r.label),
        };
        if r.path == f.path {
            here.push(span);
        } else {
            elsewhere.push((&r.path, span));
        }
    }
    here.sort_by_key(|s| (s.line, s.label.is_some(), s.column));
    let width = here
        .iter()
        .chain(elsewhere.iter().map(|(_, s)| s))
        .map(|s| s.line.to_string().len())
        .max()
        .unwrap_or(1);
    let pad = " ".repeat(width);
    writeln!(out, "{pad} {}|{}", p.gutter, p.reset)?;
    let mut previous: Option<usize> = None;
    for span in &here {
        if let Some(prev) = previous {
            if span.line > prev + 1 {
                writeln!(out, "{}...{}", p.gutter, p.reset)?;
            }
        }
        let marker = if span.label.is_some() { ('-', p.help) } else { ('^', colour) };
        write_span(out, span, width, previous == Some(span.line), marker, p)?;
        previous = Some(span.line);
    }
    for (path, span) in &elsewhere {
        writeln!(out, "{pad}{}:::{} {path}:{}:{}", p.gutter, p.reset, span.line, span.column)?;
        writeln!(out, "{pad} {}|{}", p.gutter, p.reset)?;
        write_span(out, span, width, false, ('-', p.help), p)?;
    }
    if let Some(help) = &f.help {
        writeln!(out, "{pad} {}={} {}help{}: {help}", p.gutter, p.reset, p.help, p.reset)?;
    }
    writeln!(out)
}

/// A span to underline: the primary one (no label) or a piece of evidence.
struct Span<'f> {
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    source_line: &'f str,
    source_line_start: usize,
    label: Option<&'f str>,
}

/// The source line (unless the previous span already showed it) and the underline below it.
fn write_span(
    out: &mut dyn Write,
    span: &Span,
    width: usize,
    line_shown: bool,
    (mark, colour): (char, &str),
    p: &Palette,
) -> io::Result<()> {
    let pad = " ".repeat(width);
    let line = span.source_line.trim_end();
    if !line_shown {
        writeln!(out, "{}{:>width$} |{} {line}", p.gutter, span.line, p.reset)?;
    }
    // Keep tabs so the marks line up under the span however the terminal expands them.
    let column = span.column.saturating_sub(span.source_line_start);
    let before: String =
        line.chars().take(column.saturating_sub(1)).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
    let line_chars = line.chars().count();
    let end_column = span.end_column.saturating_sub(span.source_line_start);
    let end = if span.end_line == span.line { end_column.min(line_chars + 1) } else { line_chars + 1 };
    let width = end.saturating_sub(column).max(1);
    let marks: String = std::iter::repeat_n(mark, width).collect();
    let label = span.label.map(|l| format!(" {l}")).unwrap_or_default();
    writeln!(out, "{pad} {}|{} {before}{colour}{marks}{label}{}", p.gutter, p.reset, p.reset)
}
