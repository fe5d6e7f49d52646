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
    if outcome.findings.is_empty() {
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
    let number = f.line.to_string();
    let pad = " ".repeat(number.len());
    let line = f.source_line.trim_end();
    writeln!(out, "{pad} {}|{}", p.gutter, p.reset)?;
    writeln!(out, "{}{number} |{} {line}", p.gutter, p.reset)?;
    // Keep tabs so the carets line up under the span however the terminal expands them.
    let column = f.column.saturating_sub(f.source_line_start);
    let before: String =
        line.chars().take(column.saturating_sub(1)).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
    let line_chars = line.chars().count();
    let end_column = f.end_column.saturating_sub(f.source_line_start);
    let end = if f.end_line == f.line { end_column.min(line_chars + 1) } else { line_chars + 1 };
    let width = end.saturating_sub(column).max(1);
    writeln!(out, "{pad} {}|{} {before}{colour}{}{}", p.gutter, p.reset, "^".repeat(width), p.reset)?;
    if let Some(help) = &f.help {
        writeln!(out, "{pad} {}={} {}help{}: {help}", p.gutter, p.reset, p.help, p.reset)?;
    }
    writeln!(out)
}
