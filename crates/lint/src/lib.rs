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
//! checked), [`semantic`] records what the module binds and [`flow`] traces values through
//! it (both from the crate `assertscope-flow`, which the origin analysis shares), and each
//! rule in [`rules`] reports what it sees through the [`checker::Checker`]; each report is
//! then located as a [`Violation`] (line, columns, source line, evidence chain). [`walk`]
//! finds the files in parallel, honouring `.gitignore`, and follows a file's imports of the
//! project's own modules; [`output`] writes a run as JSON (`assertscope.lint/1`), SARIF
//! 2.1.0 or GitHub Actions annotations.
//!
//! What this crate does not do: print. The rustc-style text and the `--diff` view are drawn
//! by the binary's shared renderer (`assertscope`'s `lint_render`), and the command line is
//! the binary's `commands::lint`.

pub mod callsites;
pub mod config;
pub mod fix;
mod losses;
pub mod noqa;
pub mod output;
pub mod rules;
pub mod selection;
pub mod source;
pub mod walk;

// The flow engine is the crate `assertscope-flow`, shared with the origin analysis.
pub use assertscope_flow::{flow, imports, semantic, summary};
pub use assertscope_flow::{Evidence, Place, Related};

use ruff_text_size::TextRange;
use serde::Serialize;
use std::cell::RefCell;

pub use selection::Selection;

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
    Sometimes(fix::Applicability, &'static str),
    /// A fix of this applicability on every finding.
    Always(fix::Applicability, &'static str),
}

impl Autofix {
    /// One line: whether and how the rule fixes.
    pub fn describe(self) -> String {
        let flag = |a: fix::Applicability| match a {
            fix::Applicability::Safe => "safe, applied by --fix",
            fix::Applicability::Unsafe => "unsafe, applied by --fix --unsafe-fixes",
            fix::Applicability::DisplayOnly => "display-only, shown and never applied",
        };
        match self {
            Autofix::None => "none: the change depends on what the code means".to_string(),
            Autofix::Always(a, how) => format!("{}: {how}", flag(a)),
            Autofix::Sometimes(a, how) => format!("{}, on some findings: {how}", flag(a)),
        }
    }
}

/// Every lint rule's documentation, ordered by code.
pub fn rule_docs() -> Vec<RuleDoc> {
    rules::ALL.iter().map(|r| r.doc.clone()).collect()
}

/// A rule's severity: an error (the code crashes) or a warning (training goes wrong without
/// an error). The binary's diagnostic model has the same two, and a note.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// The code syntax errors are reported under; not a rule, so never deselected.
pub const SYNTAX_ERROR: &str = "syntax-error";

/// One problem found in one file, located for people and tools.
#[derive(Debug, Clone, Serialize)]
pub struct Violation {
    pub code: &'static str,
    pub severity: Severity,
    pub path: String,
    /// 1-based line and column (in characters) of the start, and of the end.
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
    /// The cause id (causes.toml) this finding would end in.
    pub cause: Option<&'static str>,
    /// The source line of the start, for rendering: the whole line, or on a very long line a
    /// window around the column that starts at character `source_line_start` (0-based).
    #[serde(skip)]
    pub source_line: String,
    #[serde(skip)]
    pub source_line_start: usize,
    /// The evidence chain, as rustc's secondary labels: where the value was made and the
    /// steps it took to the primary span ("defined here", "flows here"), in source order of
    /// the chain, primary span excluded.
    pub related: Vec<Related>,
    /// The fix, when the rule can write one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<fix::Fix>,
}

/// What rules report, before it is located.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub code: &'static str,
    pub range: TextRange,
    pub message: String,
    pub help: String,
    pub evidence: Vec<Evidence>,
    pub fix: Option<fix::Fix>,
}

/// What a rule sees: the module, its value tracing, and a place to report.
pub struct Checker<'a> {
    pub sem: &'a semantic::Semantic<'a>,
    pub flow: flow::Flow<'a>,
    pub source: &'a str,
    pub losses: Vec<losses::LossCall<'a>>,
    diagnostics: RefCell<Vec<Diagnostic>>,
}

impl Checker<'_> {
    pub fn report(&self, code: &'static str, range: TextRange, message: String, help: String) {
        self.report_with(code, range, message, help, Vec::new());
    }

    /// Reports a finding with its evidence chain (secondary spans).
    pub fn report_with(
        &self,
        code: &'static str,
        range: TextRange,
        message: String,
        help: String,
        evidence: Vec<Evidence>,
    ) {
        self.report_fixable(code, range, message, help, evidence, None);
    }

    /// Reports a finding with its evidence chain and a fix (edits on this file's text).
    pub fn report_fixable(
        &self,
        code: &'static str,
        range: TextRange,
        message: String,
        help: String,
        evidence: Vec<Evidence>,
        fix: Option<fix::Fix>,
    ) {
        self.diagnostics.borrow_mut().push(Diagnostic { code, range, message, help, evidence, fix });
    }

    /// The source text of a node, for messages.
    pub fn text(&self, range: TextRange) -> &str {
        let text = &self.source[range];
        match text.find('\n') {
            Some(newline) => text[..newline].trim_end(),
            None => text,
        }
    }
}

/// Lints one file's text. `path` is only used to label the findings.
pub fn lint_source(path: &str, text: &str, selection: &Selection) -> Vec<Violation> {
    lint_source_with(path, text, selection, &summary::NoImports)
}

/// Lints one file's text, following its imports of local modules through `imports`.
pub fn lint_source_with(
    path: &str,
    text: &str,
    selection: &Selection,
    imports: &dyn summary::Resolver,
) -> Vec<Violation> {
    let parsed = source::SourceFile::parse(text);
    if let Some(at) = parsed.too_deep() {
        let message = format!(
            "expressions nested more than {} levels deep: too deep to parse, and to run (CPython refuses such \
             nesting: \"too many nested parentheses\", or a MemoryError in its parser)",
            assertscope_flow::nesting::MAX_NESTING
        );
        let range = ruff_text_size::TextRange::empty(at);
        return vec![source::locate(
            &parsed,
            path,
            SYNTAX_ERROR,
            Severity::Error,
            range,
            message,
            None,
            None,
        )];
    }
    let mut findings: Vec<Violation> = parsed
        .syntax_errors()
        .map(|(range, message)| {
            source::locate(&parsed, path, SYNTAX_ERROR, Severity::Error, range, message, None, None)
        })
        .collect();
    let active: Vec<&rules::Rule> = rules::ALL.iter().filter(|r| selection.selects(r.doc.code)).collect();
    let sem = semantic::Semantic::build(parsed.suite());
    let nested_too_deep = sem.truncated;
    if !active.is_empty() && !other_framework(&sem) {
        let flow = flow::Flow::new(&sem, imports);
        let losses = losses::loss_calls(&flow);
        let checker =
            Checker { sem: &sem, flow, source: text, losses, diagnostics: RefCell::new(Vec::new()) };
        for rule in &active {
            (rule.check)(&checker);
        }
        let noqa = noqa::Directives::from_source(&parsed);
        for diagnostic in checker.diagnostics.into_inner() {
            let Some(rule) = active.iter().find(|r| r.doc.code == diagnostic.code) else { continue };
            if noqa.suppresses(parsed.line_of(diagnostic.range.start()), diagnostic.code) {
                continue;
            }
            let mut finding = source::locate(
                &parsed,
                path,
                rule.doc.code,
                rule.doc.severity,
                diagnostic.range,
                diagnostic.message,
                Some(diagnostic.help),
                Some(rule.doc.cause),
            );
            finding.related = locate_evidence(&parsed, path, diagnostic.range, diagnostic.evidence);
            finding.fix = diagnostic.fix;
            findings.push(finding);
        }
    }
    drop(sem);
    findings.sort_by(|a, b| (a.line, a.column, a.code).cmp(&(b.line, b.column, b.code)));
    findings.dedup_by(|a, b| a.line == b.line && a.column == b.column && a.code == b.code);
    parsed.dispose(nested_too_deep);
    findings
}

/// Whether the module is JAX, Flax, TensorFlow/Keras, MLX or Paddle code and not PyTorch:
/// those frameworks clamp or raise where CUDA kernels assert, and their APIs share names
/// with PyTorch's (`one_hot`, `add_tokens`, `from_pretrained`).
fn other_framework(sem: &semantic::Semantic) -> bool {
    let roots = || sem.imports.values().map(|i| i.root());
    let other = roots().any(|r| {
        matches!(
            r,
            "jax" | "flax" | "tensorflow" | "keras" | "tf_keras" | "mlx" | "paddle" | "optax" | "haiku"
        )
    });
    other && !roots().any(|r| r == "torch")
}

/// Locates a finding's evidence, leaving out steps on the primary span itself and repeats.
fn locate_evidence(
    parsed: &source::SourceFile,
    path: &str,
    primary: TextRange,
    evidence: Vec<Evidence>,
) -> Vec<Related> {
    let mut out: Vec<Related> = Vec::new();
    for step in evidence {
        let related = match step.place {
            Place::Here(range) if range == primary || primary.contains_range(range) => continue,
            Place::Here(range) => parsed.locate_related(path, range, step.label),
            Place::Elsewhere(mut related) => {
                related.label = step.label;
                related
            }
        };
        let same =
            |r: &Related| r.path == related.path && r.line == related.line && r.column == related.column;
        if !out.iter().any(same) {
            out.push(related);
        }
    }
    out
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
            prevents(rule),
        ));
    }
    out
}

/// The cause a rule prevents, or for a warning with no cause what it is about.
pub fn prevents(rule: &RuleDoc) -> String {
    match (rule.cause, rule.severity) {
        ("none", Severity::Warning) => {
            "no assert (a warning: training goes wrong without an error)".to_string()
        }
        (cause, _) => cause.to_string(),
    }
}
