//! The human rendering of a check: what was read, the class histogram, then each finding
//! rustc-style (the finding, where, the first offending values, the fix).

use super::checks::{thousands, Finding};
use super::histogram;
use super::read::Layout;
use super::report::{file_name, FileRows};
use super::site;
use super::Inspection;
use crate::diagnostic::{Diagnostic, Severity};
use crate::render::style::Palette;
use crate::render::text;
use std::fmt::Write as _;

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

/// One finding (see `site::diagnostic`); a note is its message alone.
fn diagnostic(inspection: &Inspection, f: &Finding) -> Diagnostic {
    if f.severity == Severity::Note {
        return Diagnostic::new(f.severity, Some(f.cause), f.message.as_str());
    }
    site::diagnostic(&FileRows(inspection), f, true)
}
