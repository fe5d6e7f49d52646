//! Linting one file's text: parse, build the module's facts, run the selected rules, drop
//! what `# noqa` suppresses, and locate each report as a [`Violation`].

use crate::checker::Checker;
use crate::rule_doc::{RuleDoc, Severity};
use crate::selection::Selection;
use crate::violation::{Violation, SYNTAX_ERROR};
use crate::{rules, source};
use assertscope_flow::flow::Flow;
use assertscope_flow::semantic::Semantic;
use assertscope_flow::summary;

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
        let docs: Vec<&RuleDoc> = active.iter().map(|r| &r.doc).collect();
        let checker = Checker::new(&sem, Flow::new(&sem, imports), &parsed, path, &docs);
        for rule in &active {
            (rule.check)(&checker);
        }
        findings.extend(checker.into_violations());
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
