//! The human rendering of a check: what was read, the class histogram, then each finding
//! rustc-style (the finding, where, the first offending values, the fix).

use super::checks::{thousands, Finding};
use super::histogram;
use super::read::Layout;
use super::report::{describe, file_name, place_and_value, text_line};
use super::Inspection;
use crate::diagnostic::read_line;
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::render::style::Palette;
use crate::render::text;
use std::fmt::Write as _;

/// Offending values shown per finding.
const SHOWN: usize = 5;

pub fn human(inspection: &Inspection, p: &Palette) -> String {
    let mut out = String::new();
    let s = &inspection.stats;
    let files = &inspection.files;
    let what = if files.len() == 1 { file_name(inspection, 0) } else { format!("{} files", files.len()) };
    let column = inspection.column.name.as_deref().map(|n| format!(", column `{n}`")).unwrap_or_default();
    let rows = match inspection.column.layout {
        Layout::Image => format!("{} masks, {} pixels", thousands(s.rows()), thousands(s.value_count())),
        Layout::Rows(_) => format!("{} rows, {} values", thousands(s.rows()), thousands(s.value_count())),
        Layout::Scalar => format!("{} rows", thousands(s.rows())),
    };
    let _ = writeln!(out, "{}{what}{}: {rows}{column} ({})", p.bold, p.reset, inspection.dtype());
    let mut facts = Vec::new();
    if let Some((min, max)) = s.int_range() {
        facts.push(format!("min {min}, max {max}"));
    }
    if let Some(b) = &inspection.bound {
        facts.push(format!("{} {}", b.name, b.value));
    }
    if let Some(i) = inspection.bounds.ignore {
        facts.push(format!("ignore index {i}"));
    }
    if s.lengths.rows > 0 && s.lengths.max > 0 {
        facts.push(format!("row length {}..={}", s.lengths.min, s.lengths.max));
    }
    facts.push(format!("task {}", inspection.task.name()));
    let _ = writeln!(out, "  {}", facts.join("; "));
    if s.int_count() > 0 {
        let bars = histogram::bars(s, inspection.bound.as_ref().map(|b| b.value), inspection.bounds.ignore);
        out.push('\n');
        out.push_str(&histogram::draw(&bars, p));
    }
    for f in &inspection.findings {
        out.push('\n');
        out.push_str(&text::render_one(&diagnostic(inspection, f), p.enabled()));
    }
    let errors = inspection.findings.iter().filter(|f| f.severity == Severity::Error).count();
    let warnings = inspection.findings.iter().filter(|f| f.severity == Severity::Warning).count();
    out.push('\n');
    if errors == 0 {
        let _ = writeln!(
            out,
            "{}ok{}: no problem found{}",
            p.help,
            p.reset,
            if warnings > 0 {
                format!(" ({warnings} warning{})", if warnings == 1 { "" } else { "s" })
            } else {
                String::new()
            }
        );
    } else {
        let _ = writeln!(
            out,
            "{}{} problem{} found{}{}",
            p.error,
            errors,
            if errors == 1 { "" } else { "s" },
            p.reset,
            if warnings > 0 {
                format!(", {warnings} warning{}", if warnings == 1 { "" } else { "s" })
            } else {
                String::new()
            }
        );
    }
    out
}

/// One finding: where the first offending value sits, the first few values, and for an
/// error the fix's first sentence.
fn diagnostic(inspection: &Inspection, f: &Finding) -> Diagnostic {
    let mut d = Diagnostic::new(f.severity, Some(f.cause), f.message.as_str());
    if f.severity == Severity::Note {
        return d;
    }
    if let Some(first) = f.examples.first() {
        let file = inspection.files.get(first.file as usize);
        let line = text_line(inspection, first);
        let source = file.zip(line).and_then(|(file, line)| read_line(&file.path, line));
        let span = Span::at(file_name(inspection, first.file), line);
        d = d.span(match source {
            Some(text) => span.source(Some(text)).label(place_and_value(inspection, first)),
            None => span.label(describe(inspection, first)),
        });
    }
    for e in f.examples.iter().take(SHOWN).skip(1) {
        d = d.note("", describe(inspection, e));
    }
    let total = f.values.get("bad_count").and_then(|v| v.as_u64()).unwrap_or(0);
    let shown = f.examples.len().min(SHOWN) as u64;
    if total > shown {
        d = d.note("", format!("… and {} more", thousands(total - shown)));
    }
    match (f.severity, &f.fix) {
        (Severity::Error, fix) => with_cause_help(d, crate::kb::KnowledgeBase::get().expect_cause(f.cause), fix.as_deref()),
        (_, Some(fix)) => d.help(fix.as_str()),
        (_, None) => d,
    }
}

/// `= help: <the fix>` and `= note: <title>; assertscope rules <id>`: the finding's own
/// fix when it has one (a hint for this very data), else its cause's first sentence.
pub fn with_cause_help(d: Diagnostic, cause: &crate::kb::Cause, fix: Option<&str>) -> Diagnostic {
    d.note("note", format!("{}; `assertscope rules {}` explains it", cause.title, cause.id))
        .help(fix.map_or_else(|| first_sentence(&cause.fix), str::to_string))
}

/// The first sentence of a KB paragraph (up to the first ". " outside code).
fn first_sentence(text: &str) -> String {
    let text = text.trim();
    let mut in_code = false;
    for (i, c) in text.char_indices() {
        match c {
            '`' => in_code = !in_code,
            '.' if !in_code && text[i + 1..].starts_with(' ') => return text[..=i].to_string(),
            _ => {}
        }
    }
    text.to_string()
}
