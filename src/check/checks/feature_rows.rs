//! Features and labels with different numbers of rows.
//!
//! Why it matters: a dataset that zips features and labels of different lengths either
//! drops samples silently or pairs each input with the wrong label; a loss given N
//! inputs and M targets fails with a batch size mismatch.
//! Example: `X.npy` with 60,000 rows and `y.csv` with 59,999 after a header mix-up.
//! Fix: rebuild both from the same filtered table.

use super::{hint, thousands, Context, Finding, Severity};
use serde_json::json;

pub fn check(ctx: &Context) -> Vec<Finding> {
    let Some(f) = &ctx.inspection.features else { return Vec::new() };
    let labels = ctx.stats.rows();
    if f.rows == labels {
        return Vec::new();
    }
    vec![Finding::new(
        "feature-rows",
        "batch-size-mismatch",
        Severity::Error,
        format!(
            "the features ({}) have {} rows but the labels have {}",
            f.file,
            thousands(f.rows),
            thousands(labels)
        ),
    )
    .fix(hint("features-labels-rows", json!({})))
    .value("feature_rows", f.rows)
    .value("label_rows", labels)]
}
