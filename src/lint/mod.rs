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

/// `assertscope rules CODE` for a lint rule: what it does, why it matters, example, fix.
pub fn render_rule_doc(rule: &RuleDoc, p: &crate::render::style::Palette) -> String {
    format!(
        "{}{}{} ({}): {}\n\n{}what it does{}\n  {}\n\n{}why it matters{}\n  {}\n\n{}example{}\n{}\n\n{}fix{}\n  {}\n\nprevents: {}\n",
        p.bold, rule.code, p.reset, rule.name, rule.summary,
        p.bold, p.reset, rule.what_it_does,
        p.bold, p.reset, rule.why_it_matters,
        p.bold, p.reset, indent(rule.example),
        p.bold, p.reset, rule.fix,
        rule.cause,
    )
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}
