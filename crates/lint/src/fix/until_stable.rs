//! Fix, lint again, fix again: until nothing applies, the rounds run out, or a fix would
//! break the file's syntax.

use super::edits::{apply, Fix};
use crate::linter::lint_source_with;
use crate::selection::Selection;
use crate::source::SourceFile;
use crate::violation::Violation;
use assertscope_flow::summary;

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
