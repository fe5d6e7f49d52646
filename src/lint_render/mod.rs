//! What `lint` shows a person, drawn by this crate's renderer: a run's findings as
//! rustc-style text ([`write_text`], through [`crate::diagnostic`] and
//! [`crate::render::text`]), the fixes as a unified diff ([`write_diff`]), and a rule's page
//! for `assertscope rules CODE` ([`rule_page`]). What lint finds, and its JSON and SARIF,
//! are the crate `assertscope-lint`'s.

mod diff;
mod text;

pub use diff::write_diff;
pub use text::write_text;

use crate::lint::RuleDoc;
use crate::render::style::Palette;

/// `assertscope rules CODE` for a lint rule: what it does, why it matters, example, fix.
pub fn rule_page(rule: &RuleDoc, p: &Palette) -> String {
    format!(
        "{}{}{} ({}): {}\n\n{}what it does{}\n  {}\n\n{}why it matters{}\n  {}\n\n{}example{}\n{}\n\n{}fix{}\n  {}\n\n{}autofix{}\n  {}\n\nprevents: {}\n",
        p.bold, rule.code, p.reset, rule.name, rule.summary,
        p.bold, p.reset, rule.what_it_does,
        p.bold, p.reset, rule.why_it_matters,
        p.bold, p.reset, indent(rule.example),
        p.bold, p.reset, rule.fix,
        p.bold, p.reset, rule.autofix.describe(),
        rule.prevents(),
    )
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}
