//! Negative ids that are not the ignore index.
//!
//! Why it matters: a negative class or token id indexes before the start of the table;
//! the kernels assert exactly as for ids past the end. -1 and -100 are usually padding
//! meant to be skipped, which works only when the loss's `ignore_index` equals them.
//! Example: `-1` marking unlabeled rows while `CrossEntropyLoss()` ignores `-100`.
//! Fix: pass the padding value as `ignore_index`, or drop those rows.

use super::{count, hint, Context, Finding, Severity};
use crate::check::Task;
use serde_json::json;

pub fn check(ctx: &Context) -> Vec<Finding> {
    let ex = &ctx.stats.rare.negative;
    if ex.is_empty() || ctx.task == Task::Binary || ctx.inspection.bounds.upper == Some(2) {
        return Vec::new();
    }
    let (min, _) = ctx.min_max().unwrap_or((0, 0));
    let noun = ctx.noun();
    let padding = [-1i64, -100]
        .into_iter()
        .find(|v| Some(*v) != ctx.opts.ignore_index && ctx.stats.count_of(*v).unwrap_or(0) > 0);
    let verb = if ex.count == 1 { "is" } else { "are" };
    let mut message =
        format!("{} {verb} negative (min {min})", count(ex.count, noun.trim_end_matches('s'), noun));
    if let (Some(p), Some(i)) = (padding, ctx.opts.ignore_index) {
        message.push_str(&format!(", and {p} is not the ignore index {i}"));
    }
    let mut finding = Finding::new("negative", ctx.id_cause(), Severity::Error, message);
    match padding {
        _ if ctx.task == Task::Tokens => {
            let shown = padding.unwrap_or(min).to_string();
            finding = finding.advise(&hint("negative-embedding-ids", json!({ "values": shown })));
        }
        Some(p) => {
            finding = finding.advise(&hint("padding-label", json!({ "value": p })));
            if ctx.opts.ignore_index.is_none() {
                finding = finding.advise(&format!("Pass --ignore-index {p} to skip it here as well."));
            }
        }
        None => {}
    }
    vec![ctx.with_range(finding.examples(ex))]
}
