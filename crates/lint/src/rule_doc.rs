//! What a rule is to people: its code, name, page (what it does, why it matters, an
//! example, the fix), its severity, whether it fixes, and the cause it prevents.

use crate::fix::Applicability;

/// Documentation of one lint rule, shown by `assertscope rules CODE`.
#[derive(Debug, Clone)]
pub struct RuleDoc {
    /// Stable code, e.g. `AS101`.
    pub code: &'static str,
    /// Short kebab-case name.
    pub name: &'static str,
    /// One line.
    pub summary: &'static str,
    pub what_it_does: &'static str,
    pub why_it_matters: &'static str,
    pub example: &'static str,
    pub fix: &'static str,
    /// The cause id (causes.toml) the rule prevents.
    pub cause: &'static str,
    /// Whether a finding means a crash (error) or only wrong training (warning).
    pub severity: Severity,
    /// Whether its findings carry a fix that `--fix` can apply, and what the fix edits.
    pub autofix: Autofix,
}

/// What a rule's fix does, for `assertscope rules CODE` and SARIF.
#[derive(Debug, Clone, Copy)]
pub enum Autofix {
    /// No fix: the right change depends on what the code means.
    None,
    /// A fix of this applicability on some findings (when the rule can see what to write).
    Sometimes(Applicability, &'static str),
    /// A fix of this applicability on every finding.
    Always(Applicability, &'static str),
}

impl Autofix {
    /// One line: whether and how the rule fixes.
    pub fn describe(self) -> String {
        let flag = |a: Applicability| match a {
            Applicability::Safe => "safe, applied by --fix",
            Applicability::Unsafe => "unsafe, applied by --fix --unsafe-fixes",
            Applicability::DisplayOnly => "display-only, shown and never applied",
        };
        match self {
            Autofix::None => "none: the change depends on what the code means".to_string(),
            Autofix::Always(a, how) => format!("{}: {how}", flag(a)),
            Autofix::Sometimes(a, how) => format!("{}, on some findings: {how}", flag(a)),
        }
    }
}

/// A rule's severity: an error (the code crashes) or a warning (training goes wrong without
/// an error); lint never reports a note. The one severity of every finding of assertscope.
pub use assertscope_diag::Severity;

impl RuleDoc {
    /// The cause the rule prevents, or for a warning with no cause what it is about.
    pub fn prevents(&self) -> String {
        match (self.cause, self.severity) {
            ("none", Severity::Warning) => {
                "no assert (a warning: training goes wrong without an error)".to_string()
            }
            (cause, _) => cause.to_string(),
        }
    }
}
