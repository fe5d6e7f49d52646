//! AS110: int32 labels given to a class-index loss.

use super::shared::{append_call, class_targets, snippet};
use crate::checker::Checker;
use crate::fix::{Applicability, Fix};
use crate::rule_doc::{Autofix, RuleDoc, Severity};
use assertscope_flow::flow::Facts;
use ruff_text_size::Ranged;

pub const DOC: RuleDoc = RuleDoc {
    code: "AS110",
    name: "int32-class-target",
    summary:
        "labels cast to int32 (`.int()`, `dtype=torch.int32`, numpy int32) flowing into a class-index loss",
    what_it_does: "Finds targets of CrossEntropyLoss / NLLLoss whose dtype was set to int32: `.int()`, \
`.to(torch.int32)`, `torch.tensor(..., dtype=torch.int32)`, `torch.IntTensor`, or a numpy int32 array \
passed through `torch.from_numpy` / `torch.tensor` without a conversion to int64.",
    why_it_matters: "nll_loss and cross_entropy take int64 (Long) class indices and fail with \"expected \
target dtype to be Long or Byte, but got Int\" (older versions: \"expected scalar type Long but found \
Int\"). numpy arrays built from pandas or image masks are often int32, and `torch.from_numpy` keeps it.",
    example:
        "labels = torch.from_numpy(df[\"label\"].to_numpy().astype(np.int32))\nloss = criterion(out, labels)",
    fix: "Convert once where the labels are made: `.long()`, `dtype=torch.long`, or `astype(np.int64)`.",
    cause: "target-dtype",
    severity: Severity::Error,
    autofix: Autofix::Always(Applicability::Safe, "appends `.long()` to the target where the loss takes it"),
};

pub fn check(checker: &Checker) {
    for (loss, target, facts) in class_targets(checker) {
        if !facts.has(Facts::INT32) {
            continue;
        }
        let text = snippet(checker, target);
        let evidence = checker.flow.trace(target, loss.scope, Facts::INT32);
        let fix = Fix::new(
            Applicability::Safe,
            "convert the target to int64",
            vec![append_call(checker, target, "long()")],
        );
        checker.report_fixable(
            DOC.code,
            target.range(),
            format!("{} target `{text}` is int32; class indices must be int64 (Long)", loss.name()),
            format!("convert it: `{text}.long()`, or make the labels int64 where they are created"),
            evidence,
            Some(fix),
        );
    }
}
