//! Empty files, empty columns and empty sequences.
//!
//! Why it matters: an empty file or split gives an empty batch, and reductions over it
//! (`max()`, `argmax()`, the mean of a loss) fail or return NaN; an empty token sequence
//! gives an empty tensor to the embedding.
//! Example: `val.csv` holding only its header row.
//! Fix: drop empty shards and rows, or fix the export that wrote them.

use super::{count, Context, Finding, Severity};
use crate::check::read::Layout;
use crate::check::Source;

pub fn check(ctx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    let files = &ctx.inspection.files;
    let empty: Vec<&str> = ctx
        .stats
        .files
        .iter()
        .filter(|f| f.rows == 0)
        .filter_map(|f| files.get(f.file as usize).and_then(|i| i.path.to_str()))
        .collect();
    // Finite floats are counted in value_count() once sorted into whole numbers and the
    // rest; the inputs `scan` reads are not sorted, only counted.
    let no_values = ctx.stats.value_count() == 0 && ctx.stats.rare.finite_floats == 0;
    if no_values && ctx.stats.rare.colour_images.is_empty() {
        let what = if ctx.inspection.source == Source::Batches {
            "no batch holds a value".to_string()
        } else if files.len() == 1 {
            "the file holds no values".to_string()
        } else {
            format!("none of the {} files holds a value", files.len())
        };
        out.push(Finding::new(
            "empty",
            "empty-tensor",
            Severity::Error,
            format!("{what}: nothing to train on"),
        ));
    } else if !empty.is_empty()
        && ctx.inspection.column.layout != Layout::Image
        && ctx.inspection.source == Source::Files
    {
        let shown: Vec<&str> = empty.iter().take(5).copied().collect();
        out.push(
            Finding::new(
                "empty",
                "empty-tensor",
                Severity::Error,
                format!(
                    "{} no rows: {}",
                    count(empty.len() as u64, "file has", "files have"),
                    shown.join(", ")
                ),
            )
            .value("bad_count", empty.len() as u64)
            .value("files", empty.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
        );
    }
    let sequences = &ctx.stats.lengths.empty;
    if !sequences.is_empty() {
        out.push(
            Finding::new(
                "empty",
                "empty-tensor",
                Severity::Error,
                format!("{} no values", count(sequences.count, ctx.rows_have().0, ctx.rows_have().1)),
            )
            .examples(sequences),
        );
    }
    out
}
