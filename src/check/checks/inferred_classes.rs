//! The number of classes the data implies, when none is given, and gaps in the ids.
//!
//! Why it matters: the head (or the embedding) needs max + 1 outputs, whatever the
//! number of distinct ids; ids that skip values usually mean a filtered class or a
//! mapping built on another split.
//! Example: labels 0..41 with 3 ids missing, and a head of 39 outputs.
//! Fix: size the model as max + 1, or re-number the ids contiguously.

use super::{count, some_values, Context, Finding, Severity};
use crate::check::Task;

pub fn check(ctx: &Context) -> Vec<Finding> {
    if ctx.bound.is_some() || !matches!(ctx.task, Task::Classification | Task::Segmentation | Task::Tokens) {
        return Vec::new();
    }
    let Some((min, max)) = ctx.min_max() else { return Vec::new() };
    if max < 0 {
        return Vec::new();
    }
    let flag = if ctx.task == Task::Tokens { "--vocab-size" } else { "--num-classes" };
    let needed = max + 1;
    let mut out = vec![Finding::new(
        "inferred-classes",
        ctx.id_cause(),
        Severity::Note,
        format!("no {flag} given: the ids span {min}..={max}, so the model needs at least {needed} outputs"),
    )
    .value("min", min)
    .value("max", max)
    .value("inferred", needed)];
    if (max as usize) < ctx.stats.hist.len() {
        let start = min.max(0) as usize;
        let missing: Vec<i64> =
            (start..=max as usize).filter(|&i| ctx.stats.hist[i] == 0).map(|i| i as i64).collect();
        if !missing.is_empty() && ctx.task != Task::Tokens {
            out.push(
                Finding::new(
                    "inferred-classes",
                    ctx.id_cause(),
                    Severity::Warning,
                    format!(
                        "the ids are not contiguous: {} of {min}..={max} never {}: {}",
                        count(missing.len() as u64, "id", "ids"),
                        if missing.len() == 1 { "appears" } else { "appear" },
                        some_values(&missing, 12)
                    ),
                )
                .value("missing", missing.len() as u64),
            );
        }
    }
    out
}
