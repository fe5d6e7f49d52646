//! The human rendering of a check: what was read, the class histogram, then each finding
//! rustc-style (the finding, where, the first offending values, the fix).

use super::checks::{thousands, Severity};
use super::histogram;
use super::read::Layout;
use super::report::{describe, file_name};
use super::Outcome;
use crate::render::style::Palette;
use std::fmt::Write as _;

/// Offending values shown per finding.
const SHOWN: usize = 5;

pub fn human(outcome: &Outcome, p: &Palette) -> String {
    let mut out = String::new();
    let s = &outcome.stats;
    let files = &outcome.files;
    let what = if files.len() == 1 { file_name(outcome, 0) } else { format!("{} files", files.len()) };
    let column = outcome.column.name.as_deref().map(|n| format!(", column `{n}`")).unwrap_or_default();
    let rows = match outcome.column.layout {
        Layout::Image => format!("{} masks, {} pixels", thousands(s.rows()), thousands(s.value_count())),
        Layout::Rows(_) => format!("{} rows, {} values", thousands(s.rows()), thousands(s.value_count())),
        Layout::Scalar => format!("{} rows", thousands(s.rows())),
    };
    let _ = writeln!(out, "{}{what}{}: {rows}{column} ({})", p.bold, p.reset, outcome.dtype());
    let mut facts = Vec::new();
    if let Some((min, max)) = s.int_range() {
        facts.push(format!("min {min}, max {max}"));
    }
    if let Some(b) = &outcome.bound {
        facts.push(format!("{} {}", b.name, b.value));
    }
    if let Some(i) = outcome.bounds.ignore {
        facts.push(format!("ignore index {i}"));
    }
    if s.lengths.rows > 0 && s.lengths.max > 0 {
        facts.push(format!("row length {}..={}", s.lengths.min, s.lengths.max));
    }
    facts.push(format!("task {}", outcome.task.name()));
    let _ = writeln!(out, "  {}", facts.join("; "));
    if s.int_count() > 0 {
        let bars = histogram::bars(s, outcome.bound.as_ref().map(|b| b.value), outcome.bounds.ignore);
        out.push('\n');
        out.push_str(&histogram::draw(&bars, p));
    }
    for f in &outcome.findings {
        out.push('\n');
        let (word, colour) = match f.severity {
            Severity::Error => ("error", p.error),
            Severity::Warning => ("warning", p.warning),
            Severity::Note => ("note", p.note),
        };
        let _ = writeln!(out, "{colour}{word}[{}]{}{}: {}{}", f.cause, p.reset, p.bold, f.message, p.reset);
        if f.severity == Severity::Note {
            continue;
        }
        if let Some(first) = f.examples.first() {
            let line = first.at.line.map(|l| format!(":{l}")).unwrap_or_default();
            let _ = writeln!(out, "  {}-->{} {}{line}", p.gutter, p.reset, file_name(outcome, first.file));
        }
        for e in f.examples.iter().take(SHOWN) {
            let _ = writeln!(out, "   {}={} {}", p.gutter, p.reset, describe(outcome, e));
        }
        let total = f.values.get("bad_count").and_then(|v| v.as_u64()).unwrap_or(0);
        let shown = f.examples.len().min(SHOWN) as u64;
        if total > shown {
            let _ = writeln!(out, "   {}={} … and {} more", p.gutter, p.reset, thousands(total - shown));
        }
        if f.severity == Severity::Error {
            let cause = crate::kb::KnowledgeBase::get().expect_cause(f.cause);
            help_line(&mut out, p, cause, f.fix.as_deref());
        }
    }
    let errors = outcome.findings.iter().filter(|f| f.severity == Severity::Error).count();
    let warnings = outcome.findings.iter().filter(|f| f.severity == Severity::Warning).count();
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

/// `= help: <the fix's first sentence>` and `= note: <title>; assertscope rules <id>`; the
/// fix is the finding's own when it has one, else its cause's.
pub fn help_line(out: &mut String, p: &Palette, cause: &crate::kb::Cause, fix: Option<&str>) {
    let _ = writeln!(
        out,
        "   {}={} {}help{}: {}",
        p.gutter,
        p.reset,
        p.help,
        p.reset,
        first_sentence(fix.unwrap_or(&cause.fix))
    );
    let _ = writeln!(
        out,
        "   {}={} {}note{}: {}; `assertscope rules {}` explains it",
        p.gutter, p.reset, p.note, p.reset, cause.title, cause.id
    );
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
