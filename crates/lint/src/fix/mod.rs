//! Fixes, as ruff has them: a finding may carry a [`Fix`], edits on byte ranges of the
//! source that replace only what must change, so comments and formatting around them stay.
//! Each fix says how far it can be trusted ([`Applicability`]): `--fix` applies the safe
//! ones, `--unsafe-fixes` the unsafe ones too, and display-only fixes are never applied.
//! Fixes are applied, the file linted again and the new fixes applied, until nothing
//! changes ([`fix_until_stable`]), at most [`MAX_ITERATIONS`] times.

pub mod edits;

use super::{lint_source_with, source::SourceFile, summary, Selection, Violation};
use serde::Serialize;

pub use edits::{apply, Edit};

/// How far a fix can be trusted, least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Applicability {
    /// Shown with the finding, never applied: it needs a choice only a person can make.
    DisplayOnly,
    /// Applied with `--unsafe-fixes`: it does what the code meant in the usual case, but may
    /// change what the program computes (a loss, which samples train).
    Unsafe,
    /// Applied with `--fix`: the code did not run as written (it would assert), and the
    /// fix is what the code meant.
    Safe,
}

impl Applicability {
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::DisplayOnly => "display-only",
            Applicability::Unsafe => "unsafe",
            Applicability::Safe => "safe",
        }
    }
}

/// One fix of one finding: its edits are applied together or not at all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fix {
    pub applicability: Applicability,
    /// What the fix does, in a few words ("squeeze the target to shape [N]").
    pub message: String,
    /// Sorted by start; never overlapping.
    pub edits: Vec<Edit>,
}

impl Fix {
    pub fn new(applicability: Applicability, message: impl Into<String>, mut edits: Vec<Edit>) -> Fix {
        edits.sort_by_key(|e| (e.start, e.end));
        Fix { applicability, message: message.into(), edits }
    }

    /// Whether `--fix` (with `unsafe_fixes` for `--unsafe-fixes`) applies it.
    pub fn applies(&self, unsafe_fixes: bool) -> bool {
        match self.applicability {
            Applicability::Safe => true,
            Applicability::Unsafe => unsafe_fixes,
            Applicability::DisplayOnly => false,
        }
    }
}

/// The most rounds of fix-and-lint-again on one file. A fix that makes another possible
/// (two findings whose fixes overlap) needs a second round; more than a few means two
/// fixes undo each other, and the file is left as the last round made it.
pub const MAX_ITERATIONS: usize = 100;

/// One file after fixing.
#[derive(Debug)]
pub struct Fixed {
    /// The fixed text (equal to the input when nothing applied).
    pub text: String,
    /// How many fixes were applied, over all rounds.
    pub applied: usize,
    /// The findings of the fixed text.
    pub findings: Vec<Violation>,
    /// False when the rounds ran out before nothing was left to apply.
    pub converged: bool,
}

/// Lints `text`, applies the fixes that apply, and repeats until no fix applies or the
/// fixed text would no longer parse (then the last text that parsed is kept).
pub fn fix_until_stable(
    path: &str,
    text: &str,
    selection: &Selection,
    imports: &dyn summary::Resolver,
    unsafe_fixes: bool,
) -> Fixed {
    let mut current = text.to_string();
    let mut applied = 0;
    let mut findings = lint_source_with(path, &current, selection, imports);
    for _ in 0..MAX_ITERATIONS {
        let fixes: Vec<&Fix> =
            findings.iter().filter_map(|f| f.fix.as_ref()).filter(|f| f.applies(unsafe_fixes)).collect();
        if fixes.is_empty() {
            return Fixed { text: current, applied, findings, converged: true };
        }
        let (next, count) = apply(&current, &fixes);
        if count == 0 || next == current || breaks_syntax(&current, &next) {
            return Fixed { text: current, applied, findings, converged: true };
        }
        current = next;
        applied += count;
        findings = lint_source_with(path, &current, selection, imports);
    }
    Fixed { text: current, applied, findings, converged: false }
}

/// Whether `after` has syntax errors that `before` had not: a fix must never be what breaks
/// the file.
fn breaks_syntax(before: &str, after: &str) -> bool {
    let errors = |text: &str| SourceFile::parse(text).syntax_errors().count();
    errors(after) > errors(before)
}
