//! AS103: BCELoss / binary_cross_entropy given values that are not probabilities.

use super::{loss_inputs, snippet};
use crate::lint::flow::Facts;
use crate::lint::losses::LossKind;
use crate::lint::{Autofix, Checker, RuleDoc, Severity};
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
    autofix: Autofix::None,
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
        checker.report_with(
            DOC.code,
            input.range(),
            format!(
                "{} is given `{text}`, which is not passed through sigmoid; values outside [0, 1] assert",
                loss.name()
            ),
            format!("use {with_logits} on the raw logits (or apply torch.sigmoid first)"),
            evidence,
        );
    }
}
