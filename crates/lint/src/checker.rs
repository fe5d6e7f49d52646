//! What a rule sees while it runs (the module, its value tracing, the loss calls) and
//! where it reports, before a report is located in the file.

use crate::fix::Fix;
use crate::losses::{loss_calls, LossCall};
use assertscope_flow::flow::Flow;
use assertscope_flow::semantic::Semantic;
use assertscope_flow::Evidence;
use ruff_text_size::TextRange;
use std::cell::RefCell;

/// What rules report, before it is located.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub code: &'static str,
    pub range: TextRange,
    pub message: String,
    pub help: String,
    pub evidence: Vec<Evidence>,
    pub fix: Option<Fix>,
}

/// What a rule sees: the module, its value tracing, and a place to report.
pub struct Checker<'a> {
    pub sem: &'a Semantic<'a>,
    pub flow: Flow<'a>,
    pub source: &'a str,
    pub losses: Vec<LossCall<'a>>,
    diagnostics: RefCell<Vec<Diagnostic>>,
}

impl<'a> Checker<'a> {
    /// A checker of one module, its loss calls found.
    pub fn new(sem: &'a Semantic<'a>, flow: Flow<'a>, source: &'a str) -> Self {
        let losses = loss_calls(&flow);
        Checker { sem, flow, source, losses, diagnostics: RefCell::new(Vec::new()) }
    }

    /// What the rules reported, in the order they reported it.
    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.diagnostics.into_inner()
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
