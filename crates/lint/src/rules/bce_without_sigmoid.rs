//! AS103: BCELoss / binary_cross_entropy given values that are not probabilities.

use super::shared::{loss_inputs, snippet};
use crate::checker::Checker;
use crate::fix::{Applicability, Edit, Fix};
use crate::losses::{LossCall, LossKind};
use crate::rule_doc::{Autofix, RuleDoc, Severity};
use assertscope_flow::flow::Facts;
use assertscope_flow::flow::Instance;
use ruff_python_ast::Expr;
use ruff_text_size::Ranged;

pub const DOC: RuleDoc = RuleDoc {
    code: "AS103",
    name: "bce-without-sigmoid",
    summary: "BCELoss / binary_cross_entropy fed raw model output instead of sigmoid probabilities",
    what_it_does: "Finds `nn.BCELoss` and `F.binary_cross_entropy` calls whose input is raw output: a \
`nn.Linear`/convolution, a local model whose `forward` does not end in sigmoid, a torchvision model, \
`.logits`, or `randn`, with no `sigmoid`, `softmax` or `clamp(0, 1)` in between.",
    why_it_matters: "binary_cross_entropy requires inputs in [0, 1]. On the GPU a value outside that range \
trips the device-side assert `input_val >= zero && input_val <= one` and the whole CUDA context is \
lost; on the CPU it raises \"all elements of input should be between 0 and 1\".",
    example:
        "criterion = nn.BCELoss()\nlogits = self.classifier(features)\nloss = criterion(logits, targets)",
    fix: "Use `nn.BCEWithLogitsLoss` (or `F.binary_cross_entropy_with_logits`) on the raw logits: it is \
also numerically stabler than sigmoid followed by BCELoss.",
    cause: "bce-input-range",
    severity: Severity::Error,
    autofix: Autofix::Sometimes(
        Applicability::Unsafe,
        "renames `nn.BCELoss` to `nn.BCEWithLogitsLoss` where the loss is built, or `F.binary_cross_entropy` to `F.binary_cross_entropy_with_logits` (another call of the same loss object may pass probabilities)",
    ),
};

pub fn check(checker: &Checker) {
    for (loss, input, facts) in loss_inputs(checker, &[LossKind::Bce]) {
        if !facts.has(Facts::LOGITS) || checker.flow.facts_on_any_path(input, loss.scope).has(Facts::PROB) {
            continue;
        }
        let text = snippet(checker, input);
        let with_logits =
            if loss.functional { "F.binary_cross_entropy_with_logits" } else { "nn.BCEWithLogitsLoss" };
        let evidence = checker.flow.trace(input, loss.scope, Facts::LOGITS);
        let fix = with_logits_fix(checker, loss);
        // The fix says "use the with-logits loss" already: the help gives the other way only.
        let help = match fix {
            Some(_) => format!("or keep {} and apply `torch.sigmoid` to `{text}` first", loss.name()),
            None => format!("use {with_logits} on the raw logits (or apply torch.sigmoid first)"),
        };
        checker.report_fixable(
            DOC.code,
            input.range(),
            format!(
                "{} is given `{text}`, which is not passed through sigmoid; values outside [0, 1] assert",
                loss.name()
            ),
            help,
            evidence,
            fix,
        );
    }
}

/// Renames the loss to its with-logits twin where its name is written as an attribute
/// (`nn.BCELoss`, `F.binary_cross_entropy`): a bare imported name would need a new import.
fn with_logits_fix<'a>(checker: &Checker<'a>, loss: &LossCall<'a>) -> Option<Fix> {
    let (func, new_name) = if loss.functional {
        (&*loss.call.func, "binary_cross_entropy_with_logits")
    } else {
        let Some(Instance::Torch(_, constructor, _)) = checker.flow.instance(&loss.call.func, loss.scope)
        else {
            return None;
        };
        (&*constructor.func, "BCEWithLogitsLoss")
    };
    let Expr::Attribute(attr) = func else { return None };
    Some(Fix::new(
        Applicability::Unsafe,
        format!("use `{new_name}`, which takes the raw logits"),
        vec![Edit::replace(attr.attr.range, new_name)],
    ))
}
