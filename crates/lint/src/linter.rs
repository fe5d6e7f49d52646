//! Linting one file's text: parse, build the module's facts, run the selected rules, drop
//! what `# noqa` suppresses, and locate each report as a [`Violation`].

use crate::checker::Checker;
use crate::rule_doc::Severity;
use crate::selection::Selection;
use crate::violation::{Violation, SYNTAX_ERROR};
use crate::{noqa, rules, source};
use assertscope_flow::flow::Flow;
use assertscope_flow::semantic::Semantic;
use assertscope_flow::{summary, Evidence, Place, Related};
use ruff_text_size::TextRange;

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
    let sem = Semantic::build(parsed.suite());
    let nested_too_deep = sem.truncated;
    if !active.is_empty() && !other_framework(&sem) {
        let checker = Checker::new(&sem, Flow::new(&sem, imports), text);
        for rule in &active {
            (rule.check)(&checker);
        }
        let noqa = noqa::Directives::from_source(&parsed);
        for diagnostic in checker.into_diagnostics() {
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
fn other_framework(sem: &Semantic) -> bool {
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
