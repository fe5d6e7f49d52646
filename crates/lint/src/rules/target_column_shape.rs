//! AS102: class targets reshaped to a column `[N, 1]`.

use super::shared::{append_call, class_targets, snippet};
use crate::checker::Checker;
use crate::fix::{Applicability, Fix};
use crate::rule_doc::{Autofix, RuleDoc, Severity};
use assertscope_flow::flow::Facts;
use ruff_text_size::Ranged;

pub const DOC: RuleDoc = RuleDoc {
    code: "AS102",
    name: "target-column-shape",
    summary: "class targets of shape [N, 1] (`.view(-1, 1)`, `.unsqueeze(1)`, `[:, None]`) given to a class-index loss",
    what_it_does: "Finds targets of CrossEntropyLoss / NLLLoss that were reshaped to a column with \
`.view(-1, 1)`, `.reshape(-1, 1)`, `.unsqueeze(1)` or `[:, None]`, or that a DataLoader stacks to \
`[N, 1]` because each sample's label is a one-element tensor (`torch.tensor([label])`).",
    why_it_matters: "Class-index losses want targets of shape `[N]`. A `[N, 1]` target raises \"0D or 1D \
target tensor expected, multi-target not supported\", or, with a `[N, C, 1]` input, is silently \
treated as a sequence of length one. The reshape usually comes from code written for MSELoss or \
BCELoss, where a column is right.",
    example: "y = y.view(-1, 1)\nloss = F.cross_entropy(logits, y)",
    fix: "Keep class targets one-dimensional: drop the reshape, or use `y.squeeze(1)` / `y.view(-1)`; in a \
Dataset return `torch.tensor(label)` rather than `torch.tensor([label])`.",
    cause: "target-shape",
    severity: Severity::Error,
    autofix: Autofix::Always(Applicability::Safe, "appends `.squeeze(1)` to the target where the loss takes it"),
};

pub fn check(checker: &Checker) {
    for (loss, target, facts) in class_targets(checker) {
        if !facts.has(Facts::COLUMN) || facts.has(Facts::ONE_HOT) {
            continue;
        }
        let text = snippet(checker, target);
        let evidence = checker.flow.trace(target, loss.scope, Facts::COLUMN);
        let fix = Fix::new(
            Applicability::Safe,
            "squeeze the target to shape [N]",
            vec![append_call(checker, target, "squeeze(1)")],
        );
        checker.report_fixable(
            DOC.code,
            target.range(),
            format!("{} target `{text}` has shape [N, 1]; class targets must be [N]", loss.name()),
            format!("flatten it: `{text}.squeeze(1)` (or drop the reshape that made the column)"),
            evidence,
            Some(fix),
        );
    }
}
