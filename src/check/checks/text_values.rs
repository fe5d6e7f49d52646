//! Text where numbers are expected.
//!
//! Why it matters: class names ("cat") or stray strings cannot become a Long tensor;
//! pandas turns the whole column into `object` dtype and `torch.tensor` fails, or the
//! rows are dropped somewhere unnoticed.
//! Example: a `label` column holding "cat", "dog".
//! Fix: map names to ids once (`label2id = {n: i for i, n in enumerate(sorted(names))}`)
//! and store the ids.

use super::{count, hint, Context, Finding, Severity};
use serde_json::json;

pub fn check(ctx: &Context) -> Vec<Finding> {
    let ex = &ctx.stats.rare.text;
    if ex.is_empty() {
        return Vec::new();
    }
    let all = ex.count == ctx.stats.value_count();
    let finding = if all {
        let message = format!("the {} are text, not class ids", ctx.noun());
        Finding::new("text-values", "target-dtype", Severity::Error, message)
            .advise(&hint("label-names-to-ids", json!({})))
    } else {
        let message = format!("{} text, not a number", count(ex.count, "value is", "values are"));
        Finding::new("text-values", "target-dtype", Severity::Error, message)
    };
    vec![finding.examples(ex)]
}
