//! Negative ids that are not the ignore index.
//!
//! Why it matters: a negative class or token id indexes before the start of the table;
//! the kernels assert exactly as for ids past the end. -1 and -100 are usually padding
//! meant to be skipped, which works only when the loss's `ignore_index` equals them.
//! Example: `-1` marking unlabeled rows while `CrossEntropyLoss()` ignores `-100`.
//! Fix: pass the padding value as `ignore_index`, or drop those rows.

use super::{count, Context, Finding, Severity};
use crate::check::Task;

pub fn check(ctx: &Context) -> Vec<Finding> {
    let ex = &ctx.stats.rare.negative;
    if ex.is_empty() || ctx.task == Task::Binary || ctx.outcome.bounds.upper == Some(2) {
        return Vec::new();
    }
    let (min, _) = ctx.min_max().unwrap_or((0, 0));
    let noun = ctx.noun();
    let padding = [-1i64, -100].into_iter().find(|v| ctx.stats.count_of(*v).unwrap_or(0) > 0);
    let verb = if ex.count == 1 { "is" } else { "are" };
    let mut message =
        format!("{} {verb} negative (min {min})", count(ex.count, noun.trim_end_matches('s'), noun));
    match (padding, ctx.opts.ignore_index) {
        (Some(p), None) => message.push_str(&format!(
            "; if {p} marks padding, the loss must skip it: pass --ignore-index {p} and ignore_index={p} to the loss"
        )),
        (Some(p), Some(i)) => message.push_str(&format!("; {p} is not the ignore index {i}")),
        _ => {}
    }
    let finding = Finding::new("negative", ctx.id_cause(), Severity::Error, message).examples(ex);
    vec![ctx.with_range(finding)]
}
