//! NaN, infinity and missing values.
//!
//! Why it matters: a NaN label cannot be a class; cast to int it becomes a huge or
//! negative id, and kept as float it poisons the loss. Empty fields become NaN once
//! pandas reads them.
//! Example: an empty `label` field in row 812 of a CSV.
//! Fix: drop or fill those rows before training (`df.dropna(subset=["label"])`).

use super::{count, Context, Finding, Severity};

pub fn check(ctx: &Context) -> Vec<Finding> {
    let r = &ctx.stats.rare;
    let mut out = Vec::new();
    if !r.nan_inf.is_empty() {
        out.push(
            Finding::new(
                "nan-inf",
                "nan-inf",
                Severity::Error,
                format!("{} NaN or infinite", count(r.nan_inf.count, "value is", "values are")),
            )
            .examples(&r.nan_inf),
        );
    }
    if !r.nulls.is_empty() {
        out.push(
            Finding::new(
                "nan-inf",
                "nan-inf",
                Severity::Error,
                format!(
                    "{} missing (empty or null; NaN once loaded)",
                    count(r.nulls.count, "value is", "values are")
                ),
            )
            .examples(&r.nulls),
        );
    }
    out
}
