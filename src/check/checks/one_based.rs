//! Labels that start at 1 when no bound is given.
//!
//! Why it matters: ids 1..=C with `num_classes = C` put the largest class out of range,
//! the classic off-by-one behind `t < n_classes` asserts. With a bound, the
//! out-of-range check words its finding this way; without one, this check warns.
//! Example: labels 1..10 from a spreadsheet and a 10-way head.
//! Fix: subtract 1 (`y - 1`), or size the head as max + 1.

use super::{hint, Context, Finding, Severity};
use crate::check::Task;
use serde_json::json;

/// Min 1, max equal to the bound, and no zero.
pub fn looks_one_based(ctx: &Context, bound: i64) -> bool {
    matches!(ctx.min_max(), Some((1, max)) if max == bound) && ctx.stats.count_of(0) == Some(0)
}

pub fn check(ctx: &Context) -> Vec<Finding> {
    if ctx.bound.is_some() || !matches!(ctx.task, Task::Classification | Task::Segmentation) {
        return Vec::new();
    }
    match ctx.min_max() {
        Some((1, max)) if max > 1 && ctx.stats.count_of(0) == Some(0) => vec![Finding::new(
            "one-based",
            "target-out-of-range",
            Severity::Warning,
            format!("{} start at 1 (min 1, max {max}, no 0)", ctx.noun()),
        )
        .advise(&hint("one-based-labels", json!({"max": max, "last": max - 1, "needed": max + 1})))
        .value("min", 1)
        .value("max", max)],
        _ => Vec::new(),
    }
}
