//! AS111: softmax output given to CrossEntropyLoss (or NLLLoss).

use super::shared::{loss_inputs, snippet};
use crate::checker::Checker;
use crate::fix::{Applicability, Edit, Fix};
use crate::losses::LossKind;
use crate::rule_doc::{Autofix, RuleDoc, Severity};
use assertscope_flow::flow::Facts;
use assertscope_flow::semantic::argument;
use ruff_python_ast::Expr;
use ruff_text_size::Ranged;

pub const DOC: RuleDoc = RuleDoc {
    code: "AS111",
    name: "softmax-into-cross-entropy",
    summary: "softmax output passed to CrossEntropyLoss (double softmax) or to NLLLoss (which wants log-probabilities)",
    what_it_does: "Finds CrossEntropyLoss / cross_entropy calls whose input went through `softmax` \
(including a local model whose `forward` ends in `softmax` or `nn.Softmax`), and NLLLoss / nll_loss \
calls given softmax probabilities instead of `log_softmax` output.",
    why_it_matters: "CrossEntropyLoss applies log_softmax itself, so softmax first squashes the logits \
into [0, 1] and the gradients nearly vanish: training crawls or stalls with no error at all. NLLLoss on \
probabilities computes a meaningless loss. Nothing asserts, which makes this mistake of the same family \
easy to miss; it is a warning.",
    example: "probs = F.softmax(model(x), dim=1)\nloss = nn.CrossEntropyLoss()(probs, y)",
    fix: "Give CrossEntropyLoss the raw logits (apply softmax only for reporting), or use log_softmax with \
NLLLoss.",
    cause: "none",
    severity: Severity::Warning,
    autofix: Autofix::Sometimes(
        Applicability::Unsafe,
        "when the loss's input is the softmax call itself: passes its logits to CrossEntropyLoss, or calls `log_softmax` instead for NLLLoss",
    ),
};

pub fn check(checker: &Checker) {
    for (loss, input, facts) in loss_inputs(checker, &[LossKind::CrossEntropy, LossKind::Nll]) {
        if !facts.has(Facts::SOFTMAX) {
            continue;
        }
        let text = snippet(checker, input);
        let (message, help) = match loss.kind {
            LossKind::Nll => (
                format!(
                    "{} is given softmax probabilities `{text}`; it expects log-probabilities",
                    loss.name()
                ),
                "use log_softmax instead of softmax".to_string(),
            ),
            _ => (
                format!(
                    "{} is given softmax output `{text}`; it applies log_softmax itself (double softmax)",
                    loss.name()
                ),
                "pass the raw logits; keep softmax for predictions only".to_string(),
            ),
        };
        let evidence = checker.flow.trace(input, loss.scope, Facts::SOFTMAX);
        let fix = softmax_fix(checker, input, loss.kind);
        checker.report_fixable(DOC.code, input.range(), message, help, evidence, fix);
    }
}

/// When the input is written as the softmax call (`F.softmax(x, dim=1)`, `torch.softmax(x, 1)`,
/// `x.softmax(-1)`): for cross_entropy the call is replaced by its logits `x`; for nll_loss
/// `softmax` becomes `log_softmax`.
fn softmax_fix(checker: &Checker, input: &Expr, kind: LossKind) -> Option<Fix> {
    let Expr::Call(call) = input else { return None };
    let Expr::Attribute(attr) = &*call.func else { return None };
    if attr.attr.as_str() != "softmax" {
        return None;
    }
    let functional = checker.sem.api_in(&call.func, "torch") == Some("softmax");
    let logits = if functional { argument(call, "input", Some(0))? } else { &*attr.value };
    let edit = match kind {
        LossKind::Nll => Edit::replace(attr.attr.range, "log_softmax"),
        _ => Edit::of(input, &checker.source[logits.range()]),
    };
    let message = match kind {
        LossKind::Nll => "take log_softmax instead",
        _ => "pass the logits without softmax",
    };
    Some(Fix::new(Applicability::Unsafe, message, vec![edit]))
}
