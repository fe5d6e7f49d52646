//! Sequences longer than the model's maximum positions.
//!
//! Why it matters: position ids run up to the sequence length; past
//! `max_position_embeddings` the position embedding is indexed out of bounds and the
//! gather kernel asserts.
//! Example: 1,500-token rows for a model with 1,024 positions.
//! Fix: truncate when tokenizing (`truncation=True, max_length=1024`).

use super::{count, Context, Finding, Severity};

pub fn check(ctx: &Context) -> Vec<Finding> {
    let (Some(max), l) = (ctx.opts.max_positions, &ctx.stats.lengths) else { return Vec::new() };
    if l.too_long.is_empty() {
        return Vec::new();
    }
    vec![Finding::new(
        "sequence-length",
        "index-out-of-bounds",
        Severity::Error,
        format!(
            "{} longer than --max-positions {max} (longest {})",
            count(l.too_long.count, "sequence is", "sequences are"),
            l.max
        ),
    )
    .examples(&l.too_long)
    .value("bound", max)
    .value("max_length", l.max)]
}
