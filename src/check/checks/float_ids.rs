//! Class or token ids stored as floats, and ones that are not whole numbers.
//!
//! Why it matters: class-index targets must be int64; `torch.tensor` of a float column
//! gives float32 targets (`expected scalar type Long but found Float`), and casting a
//! non-integer (2.5) silently picks a class.
//! Example: `label` written as `3.0` by pandas after a NaN made the column float.
//! Fix: convert once where the dataset builds targets (`torch.as_tensor(y,
//! dtype=torch.long)`), after checking every value is a whole number.

use super::{count, hint, thousands, Context, Finding, Severity};
use crate::check::stats::Sample;
use crate::check::Task;
use crate::report::Confidence;
use serde_json::json;

pub fn check(ctx: &Context) -> Vec<Finding> {
    if matches!(ctx.task, Task::Binary | Task::Multilabel) {
        return Vec::new();
    }
    let r = &ctx.stats.rare;
    let noun = ctx.noun();
    if !r.non_integer.is_empty() {
        let example = match r.non_integer.first.first().map(|e| &e.value) {
            Some(Sample::Float(v)) => format!(" (e.g. {v})"),
            _ => String::new(),
        };
        return vec![Finding::new(
            "float-ids",
            "target-dtype",
            Severity::Error,
            format!(
                "{} not whole numbers{example}: these are not class ids",
                count(
                    r.non_integer.count,
                    &format!("{} is", noun.trim_end_matches('s')),
                    &format!("{noun} are")
                )
            ),
        )
        .examples(&r.non_integer)];
    }
    let stored_float = ctx.inspection.column.is_float_storage();
    if r.whole_floats > 0 || stored_float {
        let how = if stored_float {
            format!("stored as {}", ctx.inspection.column.dtype)
        } else {
            "written as floats (3.0)".to_string()
        };
        return vec![Finding::new(
            "float-ids",
            "target-dtype",
            Severity::Error,
            format!(
                "{noun} are {how}: they become float targets (all {} are whole numbers)",
                thousands(r.whole_floats)
            ),
        )
        .advise(&hint("ids-to-int64", json!({})))
        .confidence(Confidence::Medium)
        .value("float_values", r.whole_floats)];
    }
    Vec::new()
}
