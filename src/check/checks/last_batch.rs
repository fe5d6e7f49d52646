//! A last batch of a single sample.
//!
//! Why it matters: BatchNorm in training mode needs more than one value per channel
//! (`Expected more than 1 value per channel when training`); a data set of 6k + 1
//! samples in batches of 6 ends in such a batch, once per epoch.
//! Example: 103 samples, batch size 6, and a model with `BatchNorm1d`.
//! Fix: `DataLoader(..., drop_last=True)`, or a batch size that divides the data set.

use super::{thousands, Context, Finding, Severity};

pub fn check(ctx: &Context) -> Vec<Finding> {
    let Some(b) = &ctx.inspection.batches else { return Vec::new() };
    if b.count < 2 || b.last_size != Some(1) {
        return Vec::new();
    }
    let (severity, why) = match b.model_has_batchnorm {
        Some(true) => (Severity::Error, "the model uses BatchNorm"),
        Some(false) => (Severity::Note, "harmless without BatchNorm, which this model does not use"),
        None => (Severity::Warning, "BatchNorm in training mode fails on it"),
    };
    vec![Finding::new(
        "last-batch",
        "batchnorm-single-sample",
        severity,
        format!(
            "the last batch has 1 sample ({} samples, batch size {}); {why}: pass drop_last=True",
            thousands(b.samples),
            b.first_size.map_or("?".to_string(), |s| s.to_string())
        ),
    )
    .value("last_batch", b.count - 1)]
}
