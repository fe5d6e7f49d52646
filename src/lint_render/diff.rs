//! `--diff`: what the fixes would change, as a unified diff per file (`patch -p0` applies it),
//! then a count on stderr, as ruff does.

use crate::lint::walk::LintRun;
use crate::render::style::Palette;
use std::io::{self, Write};

pub fn write_diff(out: &mut dyn Write, outcome: &LintRun, palette: &Palette) -> io::Result<()> {
    for changed in &outcome.changed {
        let diff = similar::TextDiff::from_lines(&changed.before, &changed.after);
        let text = diff.unified_diff().context_radius(3).header(&changed.path, &changed.path).to_string();
        for line in text.lines() {
            let colour = match line.as_bytes().first() {
                _ if line.starts_with("---") || line.starts_with("+++") => palette.bold,
                Some(b'-') => palette.error,
                Some(b'+') => palette.help,
                Some(b'@') => palette.note,
                _ => "",
            };
            let reset = if colour.is_empty() { "" } else { palette.reset };
            writeln!(out, "{colour}{line}{reset}")?;
        }
    }
    let fixes = outcome.fixed;
    let files = outcome.changed.len();
    match fixes {
        0 => eprintln!("no fixes to apply"),
        n => eprintln!(
            "would fix {n} problem{} in {files} file{}",
            if n == 1 { "" } else { "s" },
            if files == 1 { "" } else { "s" }
        ),
    }
    Ok(())
}
