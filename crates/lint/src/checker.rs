//! What a rule sees while it runs (the module, its value tracing, the loss calls) and
//! where it reports: each report becomes a located [`Violation`] at once, with its rule's
//! severity and cause, unless a `# noqa` comment suppresses it.

use crate::fix::Fix;
use crate::losses::{loss_calls, LossCall};
use crate::noqa::Directives;
use crate::rule_doc::RuleDoc;
use crate::source::{locate, locate_evidence, SourceFile};
use crate::violation::Violation;
use assertscope_flow::flow::Flow;
use assertscope_flow::semantic::Semantic;
use assertscope_flow::Evidence;
use ruff_text_size::TextRange;
use std::cell::RefCell;

/// What a rule sees: the module, its value tracing, and a place to report.
pub struct Checker<'a> {
    pub sem: &'a Semantic<'a>,
    pub flow: Flow<'a>,
    pub source: &'a str,
    pub losses: Vec<LossCall<'a>>,
    /// Where reports are located, and the path they are labelled with.
    parsed: &'a SourceFile<'a>,
    path: &'a str,
    /// The rules that run: a report under another code is dropped.
    active: &'a [&'a RuleDoc],
    noqa: Directives,
    violations: RefCell<Vec<Violation>>,
}

impl<'a> Checker<'a> {
    /// A checker of one module, its loss calls found, reporting for the `active` rules.
    pub fn new(
        sem: &'a Semantic<'a>,
        flow: Flow<'a>,
        parsed: &'a SourceFile<'a>,
        path: &'a str,
        active: &'a [&'a RuleDoc],
    ) -> Self {
        let losses = loss_calls(&flow);
        let noqa = Directives::from_source(parsed);
        let source = parsed.text();
        Checker {
            sem,
            flow,
            source,
            losses,
            parsed,
            path,
            active,
            noqa,
            violations: RefCell::new(Vec::new()),
        }
    }

    /// What the rules reported, in the order they reported it.
    pub fn into_violations(self) -> Vec<Violation> {
        self.violations.into_inner()
    }

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
        fix: Option<Fix>,
    ) {
        let Some(rule) = self.active.iter().find(|r| r.code == code) else { return };
        if self.noqa.suppresses(self.parsed.line_of(range.start()), code) {
            return;
        }
        let (parsed, path) = (self.parsed, self.path);
        let mut violation =
            locate(parsed, path, rule.code, rule.severity, range, message, Some(help), Some(rule.cause));
        violation.related = locate_evidence(parsed, path, range, evidence);
        violation.fix = fix;
        self.violations.borrow_mut().push(violation);
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
