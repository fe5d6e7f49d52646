//! rustc-style text: `error[CODE]: message`, `--> path:line:col`, the source line with the
//! span underlined, then the fix; drawn by the shared renderer.

use crate::lint::fix::Applicability;
use crate::lint::walk::LintRun;
use crate::lint::{self, Violation};
use crate::render::style::Palette;
use crate::render::text;
use std::io::{self, Write};

pub fn write_text(
    out: &mut dyn Write,
    outcome: &LintRun,
    palette: &Palette,
    unsafe_fixes: bool,
) -> io::Result<()> {
    for finding in &outcome.findings {
        write_finding(out, finding, palette)?;
    }
    if outcome.fixed > 0 {
        let files = outcome.changed.len();
        writeln!(
            out,
            "{}fixed {} in {}{}",
            palette.bold,
            plural(outcome.fixed, "problem"),
            plural(files, "file"),
            palette.reset
        )?;
    }
    let errors = outcome.findings.iter().filter(|f| f.severity == lint::Severity::Error).count();
    let warnings = outcome.findings.len() - errors;
    let files = match outcome.files {
        1 => "1 file".to_string(),
        n => format!("{n} files"),
    };
    if outcome.files == 0 {
        // Nothing was linted: the errors or the warning on stderr say why, and a summary
        // would only mislead.
    } else if outcome.findings.is_empty() {
        writeln!(out, "{}no problems found{} in {files}", palette.bold, palette.reset)?;
    } else {
        writeln!(
            out,
            "{}found {}{} ({}, {}) in {files}",
            palette.bold,
            plural(outcome.findings.len(), "problem"),
            palette.reset,
            plural(errors, "error"),
            plural(warnings, "warning"),
        )?;
        write_fixable(out, outcome, unsafe_fixes)?;
    }
    Ok(())
}

/// How many of the findings `--fix` would fix, as ruff says it.
fn write_fixable(out: &mut dyn Write, outcome: &LintRun, unsafe_fixes: bool) -> io::Result<()> {
    let count = |applicability: Applicability| {
        outcome
            .findings
            .iter()
            .filter(|f| f.fix.as_ref().is_some_and(|x| x.applicability == applicability))
            .count()
    };
    let (safe, unsafe_) = (count(Applicability::Safe), count(Applicability::Unsafe));
    let (with_fix, hidden) = if unsafe_fixes { (safe + unsafe_, 0) } else { (safe, unsafe_) };
    let flag = if unsafe_fixes { "--fix --unsafe-fixes" } else { "--fix" };
    match (with_fix, hidden) {
        (0, 0) => Ok(()),
        (0, hidden) => writeln!(out, "[*] {} with --fix --unsafe-fixes", fixable(hidden)),
        (n, 0) => writeln!(out, "[*] {} with {flag}", fixable(n)),
        (n, hidden) => writeln!(out, "[*] {} with {flag} ({hidden} more with --unsafe-fixes)", fixable(n)),
    }
}

fn fixable(n: usize) -> String {
    format!("{n} fixable")
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn write_finding(out: &mut dyn Write, f: &Violation, p: &Palette) -> io::Result<()> {
    writeln!(out, "{}", text::render_one(&f.diagnostic(), p.enabled()))
}
