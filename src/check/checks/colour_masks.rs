//! Colour (RGB/RGBA) images where masks of class indices are expected.
//!
//! Why it matters: a colour-coded mask holds colours, not class ids; loading it as
//! targets gives a `[H, W, 3]` tensor of values up to 255, which fails the loss's shape
//! and range checks.
//! Example: PASCAL VOC masks re-saved as RGB by an image editor.
//! Fix: save masks as single-channel (mode "L" or "P") images of class indices, or map
//! each colour to its class id before training.

use super::{count, hint, Context, Finding, Severity};
use serde_json::json;

pub fn check(ctx: &Context) -> Vec<Finding> {
    let ex = &ctx.stats.rare.colour_images;
    if ex.is_empty() {
        return Vec::new();
    }
    vec![Finding::new(
        "colour-masks",
        "target-shape",
        Severity::Error,
        format!("{} colours, not class indices", count(ex.count, "mask holds", "masks hold")),
    )
    .advise(&hint("colour-masks", json!({})))
    .examples(ex)]
}
