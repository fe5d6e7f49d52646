//! `assertscope lint`: static checks of training code (filled in by the lint rules).

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
}

/// Every lint rule's documentation, ordered by code.
pub fn rule_docs() -> Vec<RuleDoc> {
    Vec::new()
}
