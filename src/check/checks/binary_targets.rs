//! Binary and multi-hot targets outside [0, 1].
//!
//! Why it matters: BCELoss takes probabilities; a target of -1 or 2 (or a class id used
//! as a binary label) is outside [0, 1]; BCE kernels reject it, and with logits losses
//! it silently trains towards impossible values.
//! Example: labels -1/1 from an SVM-style dataset, with `--task binary`.
//! Fix: map targets to 0/1 (`(y + 1) / 2`), or use cross_entropy for class ids.

use super::{count, hint, Context, Finding, Severity};
use crate::check::read::Layout;
use crate::check::Task;
use serde_json::json;

pub fn check(ctx: &Context) -> Vec<Finding> {
    let multi_hot =
        ctx.task == Task::Multilabel && matches!(ctx.inspection.column.layout, Layout::Rows(Some(_)));
    if ctx.task != Task::Binary && !multi_hot {
        return Vec::new();
    }
    let r = &ctx.stats.rare;
    let mut out = Vec::new();
    for ex in [&r.over_bound, &r.negative] {
        if !ex.is_empty() {
            let (min, max) = ctx.min_max().unwrap_or((0, 0));
            out.push(
                Finding::new(
                    "binary-targets",
                    "bce-input-range",
                    Severity::Error,
                    format!("{} outside [0, 1]", count(ex.count, "target is", "targets are")),
                )
                .advise(&hint("bce-target-range", json!({"min": min, "max": max})))
                .examples(ex)
                .value("min", min)
                .value("max", max),
            );
        }
    }
    let soft_outside = r.non_integer.first.iter().any(|e| match e.value {
        crate::check::stats::Sample::Float(v) => !(0.0..=1.0).contains(&v),
        _ => false,
    });
    if r.finite_floats > 0 && (r.float_min < 0.0 || r.float_max > 1.0) && soft_outside {
        out.push(
            Finding::new(
                "binary-targets",
                "bce-input-range",
                Severity::Error,
                "soft targets fall outside [0, 1]".to_string(),
            )
            .advise(&hint("bce-target-range", json!({"min": r.float_min, "max": r.float_max})))
            .examples(&r.non_integer),
        );
    }
    out
}
