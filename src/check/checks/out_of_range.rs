//! Ids at or above the bound: labels >= num_classes, token ids >= vocab_size.
//!
//! Why it matters: the loss or the embedding uses the id to index a table of that size;
//! on the GPU the kernel asserts (`t >= 0 && t < n_classes`, `srcIndex <
//! srcSelectDimSize`) and the CUDA context is lost.
//! Example: `--num-classes 10` and a label 10 in row 17.
//! Fix: size the head or the embedding from the data, or remap the ids.

use super::{count, hint, one_based, Context, Finding, Severity};
use crate::check::Task;
use serde_json::json;

pub fn check(ctx: &Context) -> Vec<Finding> {
    let (Some(bound), ex) = (ctx.bound, &ctx.stats.rare.over_bound) else { return Vec::new() };
    if ex.is_empty() || matches!(ctx.task, Task::Binary) || ctx.inspection.bounds.upper != Some(bound.value) {
        return Vec::new();
    }
    let (_, max) = ctx.min_max().unwrap_or((0, 0));
    let noun = ctx.noun();
    let one_based = one_based::looks_one_based(ctx, bound.value);
    let message = if one_based {
        format!(
            "{} {} {} (min 1, max {max}, and 0 never appears)",
            count(ex.count, &format!("{} equals", noun.trim_end_matches('s')), &format!("{noun} equal")),
            bound.name,
            bound.value
        )
    } else {
        format!(
            "{} >= {} {} (max {max})",
            count(ex.count, &singular(noun), &format!("{noun} are")),
            bound.name,
            bound.value
        )
    };
    let mut finding = Finding::new("out-of-range", ctx.id_cause(), Severity::Error, message);
    if one_based && ctx.task != Task::Tokens {
        finding = finding
            .advise(&hint("one-based-labels", json!({"max": max, "last": max - 1, "needed": max + 1})));
    }
    let bad = bad_values(ctx, bound.value);
    if ctx.task == Task::Segmentation && ctx.opts.ignore_index.is_none() && bad.iter().any(|(v, _)| *v == 255)
    {
        finding = finding
            .advise(&hint("void-label-255", json!({})))
            .advise("Pass --ignore-index 255 to skip it here as well.");
    }
    let finding = finding.examples(ex).value("bound", bound.value).value(
        "bad_values",
        json!(bad.iter().map(|(v, c)| json!({"value": v, "count": c})).collect::<Vec<_>>()),
    );
    vec![ctx.with_range(finding)]
}

fn singular(noun: &str) -> String {
    format!("{} is", noun.trim_end_matches('s'))
}

/// The out-of-range values and how often each occurs (the most frequent first).
fn bad_values(ctx: &Context, bound: i64) -> Vec<(i64, u64)> {
    let mut bad: Vec<(i64, u64)> = ctx
        .stats
        .rare
        .outside
        .distinct
        .iter()
        .filter(|(v, _)| **v >= bound && Some(**v) != ctx.opts.ignore_index)
        .map(|(v, c)| (*v, *c))
        .collect();
    bad.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    bad.truncate(10);
    bad
}
