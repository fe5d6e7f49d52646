//! AS111: softmax output given to CrossEntropyLoss (or NLLLoss).

use super::{loss_inputs, snippet};
use crate::lint::flow::Facts;
use crate::lint::losses::LossKind;
use crate::lint::{Autofix, Checker, RuleDoc, Severity};
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
    autofix: Autofix::None,
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
        checker.report_with(DOC.code, input.range(), message, help, evidence);
    }
}
