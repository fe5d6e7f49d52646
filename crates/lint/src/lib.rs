//! assertscope-lint: static checks of PyTorch training code for the mistakes that end in a
//! CUDA device-side assert (a class index past the head, a tokenizer grown past its
//! embedding, probabilities that are not, a BatchNorm fed a last batch of one), found
//! before anything runs.
//!
//! The rule model is ruff's: every rule has a stable code (`AS101`…), a page of its own
//! ([`RuleDoc`]: what it does, why it matters, an example, the fix), a severity, and the
//! cause in the knowledge base it prevents. Codes are selected and ignored by prefix
//! ([`Selection`], from the command line or `[tool.assertscope.lint]` in `pyproject.toml`,
//! [`config`]), a `# noqa: AS101` comment suppresses one line ([`noqa`]), and a rule that
//! can see the right change attaches a [`fix::Fix`] of byte-range edits with ruff's
//! applicability (safe, unsafe, display-only).
//!
//! The pipeline for one file ([`lint_source`]): [`source`] parses it with Ruff's
//! error-resilient parser (a syntax error is reported and the rest of the file still
//! checked), `assertscope_flow::semantic` records what the module binds and
//! `assertscope_flow::flow` traces values through it (the crate `assertscope-flow`, which the
//! origin analysis shares), and each rule in [`rules`] reports what it sees through the
//! [`Checker`] ([`linter`] runs them); each report is then located as a [`Violation`]
//! (line, columns, source line, evidence chain). [`walk`] finds the files in parallel,
//! honouring `.gitignore`, and follows a file's imports of the project's own modules;
//! [`fix`] applies fixes until the file is stable; [`output`] writes a run as JSON
//! (`assertscope.lint/1`), SARIF 2.1.0 or GitHub Actions annotations.
//!
//! Each module takes what it needs from the sibling that defines it: [`rule_doc`] (what a
//! rule is to people), [`violation`] (a located finding), [`checker`] (what a rule sees and
//! reports). This root only names the modules, re-exports the crate's API and writes the
//! rules' documentation.
//!
//! What this crate does not do: print. The rustc-style text and the `--diff` view are drawn
//! by the binary's shared renderer (`assertscope`'s `lint_render`), and the command line is
//! the binary's `commands::lint`.

pub mod callsites;
pub mod checker;
pub mod config;
pub mod fix;
pub mod linter;
mod losses;
pub mod noqa;
pub mod output;
pub mod rule_doc;
pub mod rules;
pub mod selection;
pub mod source;
pub mod violation;
pub mod walk;

pub use checker::Checker;
pub use linter::{lint_source, lint_source_with};
pub use rule_doc::{Autofix, RuleDoc, Severity};
pub use selection::Selection;
pub use violation::{Violation, SYNTAX_ERROR};

/// Every lint rule's documentation, ordered by code.
pub fn rule_docs() -> Vec<RuleDoc> {
    rules::ALL.iter().map(|r| r.doc.clone()).collect()
}

/// docs/rules.md: every rule's page, the target of SARIF's `helpUri` (tests/lint_rules.rs
/// checks the file is this text; `ASSERTSCOPE_BLESS=1` rewrites it).
pub fn rules_markdown() -> String {
    let mut out = String::from(
        "# assertscope lint rules\n\nGenerated from the rules' own documentation (`assertscope rules CODE` \
         prints the same); do not edit by hand.\n",
    );
    for rule in rules::ALL.iter().map(|r| &r.doc) {
        out.push_str(&format!(
            "\n## {}\n\n**{}** ({}): {}\n\n**What it does.** {}\n\n**Why it matters.** {}\n\n\
             ```python\n{}\n```\n\n**Fix.** {}\n\n**Autofix.** {}\n\n**Prevents:** {}\n",
            rule.code,
            rule.name,
            rule.severity.as_str(),
            rule.summary,
            rule.what_it_does,
            rule.why_it_matters,
            rule.example,
            rule.fix,
            rule.autofix.describe(),
            rule.prevents(),
        ));
    }
    out
}
