//! Batches whose inputs and labels hold different numbers of samples.
//!
//! Why it matters: a loss given N inputs and M targets fails (`Expected input batch_size
//! (N) to match target batch_size (M)`), and a `collate_fn` or dataset that drops or
//! duplicates items pairs inputs with the wrong labels long before that.
//! Example: a `collate_fn` that pads the inputs with one extra row.
//! Fix: build inputs and labels of a batch from the same items, one per sample.

use super::{count, Context, Finding, Severity};
use serde_json::json;

pub fn check(ctx: &Context) -> Vec<Finding> {
    let Some(batches) = &ctx.inspection.batches else { return Vec::new() };
    let mismatches = &batches.size_mismatches;
    let Some(first) = mismatches.first.first() else { return Vec::new() };
    vec![Finding::new(
        "batch-sizes",
        "batch-size-mismatch",
        Severity::Error,
        format!(
            "{} has {} but {} has {}, in {}",
            first.input,
            count(first.input_samples, "sample", "samples"),
            first.label,
            first.label_samples,
            count(mismatches.count, "batch", "batches")
        ),
    )
    .value("input_batch", first.input_samples)
    .value("target_batch", first.label_samples)
    .value("bad_count", mismatches.count)
    .value("first_batches", json!(mismatches.first.iter().map(|m| m.batch).collect::<Vec<_>>()))]
}
