//! Integer ids stored narrower than int64.
//!
//! Why it matters: `torch.from_numpy` keeps the dtype, and cross_entropy / nll_loss want
//! int64 targets (`expected scalar type Long but found Int`); embeddings take int32 or
//! int64, but not uint8/int16. In a file it is a note (the dataset code may convert);
//! in the batches a DataLoader yields it is an error, for that is what the loss gets.
//! Example: `y.npy` saved as int32.
//! Fix: `.long()` where the dataset builds targets, or save as int64.

use super::{hint, Context, Finding, Severity};
use crate::check::{Source, Task};
use serde_json::json;

pub fn check(ctx: &Context) -> Vec<Finding> {
    let dtype = ctx.inspection.column.dtype.as_str();
    let narrow = matches!(dtype, "int8" | "int16" | "int32" | "uint16" | "uint32" | "uint64");
    let batches = ctx.inspection.source == Source::Batches;
    let applies = match ctx.task {
        Task::Classification => narrow || dtype == "uint8" || (batches && dtype == "bool"),
        Task::Segmentation => batches && (narrow || dtype == "uint8" || dtype == "bool"),
        Task::Tokens => narrow && dtype != "int32",
        _ => false,
    };
    if !applies {
        return Vec::new();
    }
    let (severity, message) = if batches {
        (Severity::Error, format!("{} are {dtype} tensors, not int64", ctx.noun()))
    } else {
        (Severity::Note, format!("{} are stored as {dtype}", ctx.noun()))
    };
    vec![Finding::new("storage-dtype", "target-dtype", severity, message)
        .advise(&hint("ids-to-int64", json!({})))
        .value("dtype", dtype)]
}
