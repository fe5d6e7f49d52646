//! AS101: a one-hot target given to a class-index loss.

use super::shared::{append_call, class_targets, snippet};
use crate::checker::Checker;
use crate::fix::{Applicability, Fix};
use crate::losses::LossKind;
use crate::rule_doc::{Autofix, RuleDoc, Severity};
use assertscope_flow::flow::Facts;
use ruff_text_size::Ranged;

pub const DOC: RuleDoc = RuleDoc {
    code: "AS101",
    name: "one-hot-target",
    summary: "CrossEntropyLoss / NLLLoss given one-hot targets instead of class indices",
    what_it_does: "Finds class-index losses (`nn.CrossEntropyLoss`, `F.cross_entropy`, `nn.NLLLoss`, \
`F.nll_loss`) whose target was made by `F.one_hot` or `eye(C)[y]`, following the value through \
assignments, function arguments and a local Dataset's `__getitem__`.",
    why_it_matters: "These losses expect a `[N]` tensor of class indices. A one-hot `[N, C]` integer \
tensor fails with \"0D or 1D target tensor expected, multi-target not supported\" (NLLLoss) or \
\"Expected floating point type for target with class probabilities\" (cross_entropy); code ported \
from Keras' `categorical_crossentropy` hits this first.",
    example: "labels = F.one_hot(labels, num_classes=10)\nloss = criterion(model(images), labels)",
    fix: "Pass the class indices themselves (`labels`, or `labels.argmax(dim=1)` if only the one-hot form \
is at hand). For soft labels with cross_entropy, convert the target to float probabilities.",
    cause: "target-shape",
    severity: Severity::Error,
    autofix: Autofix::Always(
        Applicability::Unsafe,
        "appends `.argmax(dim=1)` to the target (soft labels would lose their weights)",
    ),
};

pub fn check(checker: &Checker) {
    for (loss, target, facts) in class_targets(checker) {
        if !facts.has(Facts::ONE_HOT) || (loss.kind == LossKind::CrossEntropy && facts.has(Facts::FLOAT)) {
            continue;
        }
        let text = snippet(checker, target);
        let evidence = checker.flow.trace(target, loss.scope, Facts::ONE_HOT);
        checker.report_fixable(
            DOC.code,
            target.range(),
            format!(
                "{} is given a one-hot target `{text}`; it expects class indices of shape [N]",
                loss.name()
            ),
            format!("pass the class indices instead: `{text}.argmax(dim=1)`, or the labels before `one_hot`"),
            evidence,
            Some(Fix::new(
                Applicability::Unsafe,
                "take the class index of each one-hot row",
                vec![append_call(checker, target, "argmax(dim=1)")],
            )),
        );
    }
}
