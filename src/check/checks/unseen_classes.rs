//! Classes in 0..num_classes that never appear.
//!
//! Why it matters: not an error by itself, but a head sized from the classes one split
//! happens to contain (`len(set(y_train))`) is too small for a split that has the
//! missing ones, and gaps often reveal an off-by-one or a filtered class.
//! Example: classes 0..9 declared, class 7 absent from the training labels.
//! Fix: size the head from the declared label set, not from the data seen.

use super::{some_values, Context, Finding, Severity};
use crate::check::Task;

pub fn check(ctx: &Context) -> Vec<Finding> {
    let Some(bound) = ctx.bound else { return Vec::new() };
    if !matches!(ctx.task, Task::Classification | Task::Segmentation)
        || bound.value as usize > ctx.stats.hist.len()
    {
        return Vec::new();
    }
    if ctx.stats.int_count() == 0
        || matches!(ctx.inspection.column.layout, crate::check::read::Layout::Rows(_))
    {
        return Vec::new();
    }
    let missing: Vec<i64> = ctx.stats.hist[..bound.value as usize]
        .iter()
        .enumerate()
        .filter(|(_, c)| **c == 0)
        .map(|(i, _)| i as i64)
        .collect();
    if missing.is_empty() {
        return Vec::new();
    }
    vec![Finding::new(
        "unseen-classes",
        "target-out-of-range",
        Severity::Warning,
        format!(
            "{} of {} {} never {}: {}",
            missing.len(),
            bound.value,
            "classes",
            if missing.len() == 1 { "appears" } else { "appear" },
            some_values(&missing, 12)
        ),
    )
    .value("unseen", missing.len() as u64)
    .value("bound", bound.value)]
}
