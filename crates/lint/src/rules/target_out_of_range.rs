//! AS112: class labels that reach the number of classes the model scores.

use super::shared::snippet;
use crate::checker::Checker;
use crate::rule_doc::{Autofix, RuleDoc, Severity};
use assertscope_flow::semantic::argument;
use assertscope_flow::Evidence;
use ruff_text_size::Ranged;

pub const DOC: RuleDoc = RuleDoc {
    code: "AS112",
    name: "target-out-of-range",
    summary: "class targets that can reach the model's number of outputs (1-based labels, a void value like 255 not ignored)",
    what_it_does: "For CrossEntropyLoss / NLLLoss calls, works out the number of classes the input scores (the \
size of the last `nn.Linear` / convolution that makes it, through `nn.Sequential`, local models and \
`DistributedDataParallel`) and the highest label the target can hold (`torch.randint(low, high)`, \
`numpy.random.randint`, `torch.full`, literal labels, and stores like `masks[...] = 255`, through \
returns, `torch.from_numpy`, and a DataLoader over a TensorDataset or a local Dataset's `__getitem__`). Reports targets whose highest label is not below the class count, unless it is the \
loss's `ignore_index`.",
    why_it_matters: "A label equal to or above the number of classes trips `t >= 0 && t < n_classes` in \
the loss kernel: a device-side assert on the GPU, \"Target N is out of bounds\" on the CPU. 1-based \
ratings (1..5 for 5 classes) and segmentation masks whose void pixels are 255 are the usual sources.",
    example: "masks[:, :, :4] = 255\nmodel = nn.Conv2d(32, 2, 1)\nloss = nn.CrossEntropyLoss()(model(x), masks)",
    fix: "Make labels 0-based (`y - 1`), or pass the void value as `ignore_index` (`nn.CrossEntropyLoss(ignore_index=255)`), \
or size the head for every label.",
    cause: "target-out-of-range",
    severity: Severity::Error,
    autofix: Autofix::None,
};

/// PyTorch's default `ignore_index` for cross_entropy and nll_loss.
const DEFAULT_IGNORE_INDEX: i64 = -100;

pub fn check(checker: &Checker) {
    for loss in checker.losses.iter().filter(|l| l.kind.takes_class_indices()) {
        let (Some(input), Some(target)) = (loss.input, loss.target) else { continue };
        // `ignore_index` is given to the functional call, or to the loss module's constructor.
        let ignore = match ignore_index_expr(checker, loss) {
            Some(expr) => match checker.flow.int_value(expr, loss.scope) {
                Some(v) => v,
                None => continue,
            },
            None => DEFAULT_IGNORE_INDEX,
        };
        let Some((classes, classes_at)) = checker.flow.class_count(input, loss.scope) else { continue };
        let Some(max) = checker.flow.max_label(target, loss.scope, ignore) else { continue };
        // A head with no outputs is some other mistake; sizes near the integer limits are no labels.
        if classes < 1 || classes == i64::MAX || max.value < classes || max.value == ignore {
            continue;
        }
        let mut evidence = max.evidence;
        evidence
            .push(Evidence { place: classes_at, label: format!("the model scores {classes} classes here") });
        let text = snippet(checker, target);
        checker.report_with(
            DOC.code,
            target.range(),
            format!(
                "{} target `{text}` holds labels up to {}, but the input scores {classes} classes (0..{})",
                loss.name(),
                max.value,
                classes - 1
            ),
            if max.value == classes {
                format!(
                    "make the labels 0..{} (`{text} - 1` if they are 1-based), or size the head for {} classes",
                    classes - 1,
                    classes + 1
                )
            } else {
                format!(
                    "pass `ignore_index={}` to the loss if {} marks what to skip, else map the labels into 0..{}",
                    max.value,
                    max.value,
                    classes - 1
                )
            },
            evidence,
        );
    }
}

fn ignore_index_expr<'a>(
    checker: &Checker<'a>,
    loss: &crate::losses::LossCall<'a>,
) -> Option<&'a ruff_python_ast::Expr> {
    if let Some(expr) = argument(loss.call, "ignore_index", None) {
        return Some(expr);
    }
    if loss.functional {
        return None;
    }
    match checker.flow.instance(&loss.call.func, loss.scope) {
        Some(assertscope_flow::flow::Instance::Torch(_, ctor, _)) => argument(ctor, "ignore_index", None),
        _ => None,
    }
}
