//! One-hot or multi-hot rows, and `[N, 1]` columns, where class indices are expected.
//!
//! Why it matters: cross_entropy takes a 1-D tensor of class indices; an integer one-hot
//! matrix is read as class probabilities (which must be float) and `[N, 1]` as a
//! multi-target, and both fail before or inside the kernel.
//! Example: `y.npy` of shape `[50000, 10]` holding one 1 per row.
//! Fix: `y.argmax(1)` for one-hot rows, `y.squeeze(1)` for `[N, 1]`; multi-hot rows are
//! multilabel data for `BCEWithLogitsLoss` (`--task multilabel`).

use super::{count, hint, Context, Finding, Severity};
use crate::check::read::Layout;
use crate::check::Task;
use crate::report::Confidence;
use serde_json::json;

pub fn check(ctx: &Context) -> Vec<Finding> {
    let layout = ctx.inspection.column.layout;
    let p = &ctx.stats.patterns;
    match ctx.task {
        Task::Classification | Task::Binary => {}
        Task::Multilabel => return multilabel_width(ctx),
        _ => return Vec::new(),
    }
    let Layout::Rows(width) = layout else { return Vec::new() };
    if width == Some(1) {
        return vec![Finding::new(
            "row-shape",
            "target-shape",
            Severity::Error,
            format!("targets have shape {}", shape(ctx)),
        )
        .advise(&hint("target-n-by-1", json!({})))
        .confidence(Confidence::Medium)];
    }
    let rows = ctx.stats.lengths.rows.max(p.rows);
    if rows == 0 {
        return Vec::new();
    }
    let finding = if p.binary == p.rows && p.multi_hot.is_empty() && !p.one_hot.is_empty() {
        Finding::new(
            "row-shape",
            "target-shape",
            Severity::Error,
            format!("every row is a one-hot vector (shape {}), not a class index", shape(ctx)),
        )
        .advise(&hint("target-one-hot", json!({})))
        .examples(&p.one_hot)
    } else if p.binary == p.rows && !p.multi_hot.is_empty() {
        Finding::new(
            "row-shape",
            "target-shape",
            Severity::Error,
            format!("rows are multi-hot ({} with several 1s)", count(p.multi_hot.count, "row", "rows")),
        )
        .advise(&hint("multi-hot-rows", json!({})))
        .advise("Check them with --task multilabel.")
        .examples(&p.multi_hot)
    } else {
        // cross_entropy takes `[N, d1]` targets with `[N, C, d1]` inputs (per-position
        // labels, as in token classification), so several ids per row may be right.
        Finding::new(
            "row-shape",
            "target-shape",
            Severity::Warning,
            format!(
                "each row holds several values (shape {}): class-index targets have one per row, unless the model gives per-position scores ([N, C, {}])",
                shape(ctx),
                width_name(ctx)
            ),
        )
        .confidence(Confidence::Medium)
    };
    vec![finding.value("rows", rows)]
}

/// Multi-hot rows must be as wide as the number of classes.
fn multilabel_width(ctx: &Context) -> Vec<Finding> {
    match (ctx.inspection.column.layout, ctx.opts.num_classes) {
        (Layout::Rows(Some(w)), Some(c)) if w as i64 != c => vec![Finding::new(
            "row-shape",
            "target-shape",
            Severity::Error,
            format!("multi-hot rows have {w} columns but num_classes is {c}"),
        )
        .value("width", w)
        .value("bound", c)],
        _ => Vec::new(),
    }
}

fn width_name(ctx: &Context) -> String {
    match ctx.inspection.column.layout {
        Layout::Rows(Some(w)) => w.to_string(),
        _ => "L".to_string(),
    }
}

fn shape(ctx: &Context) -> String {
    match &ctx.inspection.column.shape {
        Some(s) => format!("{s:?}"),
        None => match ctx.inspection.column.layout {
            Layout::Rows(Some(w)) => format!("[N, {w}]"),
            _ => "[N, *]".to_string(),
        },
    }
}
