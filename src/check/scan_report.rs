//! `scan`'s report: what was iterated, and each finding about a field of its batches,
//! with the dataset index of each bad sample (`site` draws the findings, as for `check`).

use super::checks::{thousands, Finding};
use super::histogram;
use super::scan_facts::{BatchItem, FieldInspection, ScanFacts, ScanInspection};
use super::site::{self, from_kb, Site};
use super::stats::Example;
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::render::style::Palette;
use crate::render::text;
use crate::report::{Confidence, Location, Report, Secondary};
use serde_json::{json, Map, Value};
use std::fmt::Write as _;

/// Why no labels were checked, when none were: one line, then the items the batches hold.
fn labels_not_checked(summary: &Summary, scanned: &ScanInspection) -> Option<(String, String)> {
    if scanned.labels().is_some() || summary.batches == 0 {
        return None;
    }
    let why = match &summary.label_key {
        Some(key) => {
            format!("no labels checked: the item at --label-key {key} does not hold one label per sample")
        }
        None => "no labels checked: no item of the batches was taken for the labels".to_string(),
    };
    let items: Vec<String> = summary.structure.iter().map(BatchItem::to_string).collect();
    let held = if items.is_empty() { "nothing".to_string() } else { items.join("; ") };
    Some((why, format!("the batches hold: {held}")))
}

/// What was iterated, for the header and the JSON values.
pub struct Summary {
    target: String,
    kind: Option<String>,
    batch_size: Option<u64>,
    num_workers: Option<u64>,
    dataset_indices: bool,
    batches: u64,
    samples: u64,
    /// The items of the first batch.
    structure: Vec<BatchItem>,
    /// `--label-key`, when given.
    label_key: Option<String>,
}

impl Summary {
    pub fn of(facts: &ScanFacts, label_key: Option<String>) -> Summary {
        Summary {
            target: facts.target.clone(),
            kind: facts.kind.clone(),
            batch_size: facts.batch_size,
            num_workers: facts.num_workers,
            dataset_indices: facts.indices.as_deref() == Some("dataset"),
            batches: facts.batches.as_ref().map_or(0, |b| b.count),
            samples: facts.batches.as_ref().map_or(0, |b| b.samples),
            structure: facts.structure.clone(),
            label_key,
        }
    }
}

fn target_location(target: &str) -> Location {
    let (file, name) = target.rsplit_once(':').unwrap_or((target, ""));
    Location {
        file: file.to_string(),
        line: None,
        function: (!name.is_empty()).then(|| name.to_string()),
        code: None,
    }
}

/// "batch 3, dataset index 17: 7" (with the position inside the sample when it has several values).
fn example_text(summary: &Summary, scanned: &ScanInspection, e: &Example) -> String {
    let which = if summary.dataset_indices { "dataset index" } else { "sample" };
    let batch = scanned.batch_of.get(&e.at.row).map(|b| format!("batch {b}, ")).unwrap_or_default();
    let position = e.at.pos.map(|p| format!(", position {p}")).unwrap_or_default();
    format!("{batch}{which} {}{position}: {}", e.at.row, e.value)
}

/// The finding's message, naming the field it is about.
fn message(field: &FieldInspection, f: &Finding) -> String {
    if f.is_about_batches() {
        return f.message.clone();
    }
    format!("{}: {}", field.name, f.message)
}

/// The examples of `scan`: samples of one field of a dataset, by dataset index (or by
/// position in the iteration when the sampler's indices are not known).
struct DatasetSamples<'a> {
    summary: &'a Summary,
    scanned: &'a ScanInspection,
    field: &'a FieldInspection,
}

impl Site for DatasetSamples<'_> {
    fn message(&self, f: &Finding) -> String {
        message(self.field, f)
    }

    fn describe(&self, e: &Example) -> String {
        example_text(self.summary, self.scanned, e)
    }

    fn example_kind(&self) -> &'static str {
        "sample"
    }

    fn source_line(&self, _: &Example) -> Option<u64> {
        None
    }

    fn location(&self, _: &Finding) -> Option<Location> {
        Some(target_location(&self.summary.target))
    }

    fn values(&self, f: &Finding) -> Map<String, Value> {
        let mut values = f.values.clone();
        if !f.examples.is_empty() {
            let mut indices: Vec<u64> = Vec::new();
            let mut batches: Vec<u64> = Vec::new();
            for e in &f.examples {
                if !indices.contains(&e.at.row) {
                    indices.push(e.at.row);
                }
                if let Some(&b) = self.scanned.batch_of.get(&e.at.row) {
                    if !batches.contains(&b) {
                        batches.push(b);
                    }
                }
            }
            values.insert("first_indices".into(), json!(indices));
            values.insert("first_batches".into(), json!(batches));
        }
        values.insert("batches".into(), json!(self.summary.batches));
        values.insert("samples".into(), json!(self.summary.samples));
        values.insert("field".into(), json!(self.field.name));
        values
    }

    /// The target: a sample has no line of its own to point at.
    fn span(&self, _: &Finding) -> Option<(Span, usize)> {
        Some((Span::at(self.summary.target.as_str(), None), 0))
    }
}

/// Findings into the diagnosis contract: errors are diagnoses, warnings and notes secondary.
pub fn report(summary: &Summary, scanned: &ScanInspection) -> Report {
    let mut report = Report::default();
    for (field, f) in scanned.findings() {
        if f.severity != Severity::Error {
            report.secondary.push(Secondary { cause: f.cause.to_string(), text: message(field, f) });
            continue;
        }
        report.diagnoses.push(site::diagnosis(&DatasetSamples { summary, scanned, field }, f));
    }
    if report.diagnoses.is_empty() {
        let mut values = Map::new();
        values.insert("batches".into(), json!(summary.batches));
        values.insert("samples".into(), json!(summary.samples));
        if let Some(labels) = scanned.labels() {
            let hist = &labels.inspection.stats.hist;
            if let Some(last) = hist.iter().rposition(|&c| c > 0).filter(|&l| l < 1000) {
                values.insert("class_counts".into(), json!(hist[..=last]));
            }
        }
        let unchecked = labels_not_checked(summary, scanned);
        values.insert("labels_checked".into(), json!(unchecked.is_none()));
        if let Some((why, held)) = unchecked {
            report.secondary.push(Secondary { cause: "none".into(), text: format!("{why}; {held}") });
        }
        let location = Some(target_location(&summary.target));
        report.diagnoses.push(from_kb("none", Confidence::High, location, Vec::new(), values));
    }
    report
}

pub fn human(summary: &Summary, scanned: &ScanInspection, p: &Palette) -> String {
    let mut out = String::new();
    let mut how = Vec::new();
    if let Some(b) = summary.batch_size {
        how.push(format!("batch size {b}"));
    }
    if let Some(w) = summary.num_workers {
        how.push(format!("{w} worker{}", if w == 1 { "" } else { "s" }));
    }
    let _ = writeln!(
        out,
        "{}{}{} ({}): {} batches, {} samples{}",
        p.bold,
        summary.target,
        p.reset,
        summary.kind.as_deref().unwrap_or("?"),
        thousands(summary.batches),
        thousands(summary.samples),
        if how.is_empty() { String::new() } else { format!(" ({})", how.join(", ")) }
    );
    if let Some(labels) = scanned.labels() {
        let i = &labels.inspection;
        let mut facts = vec![format!("labels {}", labels.name), i.dtype()];
        if let Some((min, max)) = i.stats.int_range() {
            facts.push(format!("min {min}, max {max}"));
        }
        if let Some(b) = &i.bound {
            facts.push(format!("{} {}", b.name, b.value));
        }
        facts.push(format!("task {}", i.task.name()));
        let _ = writeln!(out, "  {}", facts.join("; "));
        if i.stats.int_count() > 0 {
            let bars = histogram::bars(&i.stats, i.bound.as_ref().map(|b| b.value), i.bounds.ignore);
            out.push('\n');
            out.push_str(&histogram::draw(&bars, p));
        }
    }
    let mut findings: Vec<_> = scanned.findings().collect();
    findings.sort_by_key(|(_, f)| std::cmp::Reverse(f.severity));
    for (field, f) in &findings {
        out.push('\n');
        out.push_str(&text::render_one(
            &site::diagnostic(&DatasetSamples { summary, scanned, field }, f, false),
            p.enabled(),
        ));
    }
    let unchecked = labels_not_checked(summary, scanned);
    if let Some((why, held)) = &unchecked {
        let warning = Diagnostic::new(Severity::Warning, None, why.clone())
            .span(Span::at(summary.target.as_str(), None))
            .note("", held.clone())
            .help("name the labels with --label-key KEY (a dict key or a tuple position)");
        out.push('\n');
        out.push_str(&text::render_one(&warning, p.enabled()));
    }
    let errors = findings.iter().filter(|(_, f)| f.severity == Severity::Error).count();
    out.push('\n');
    if errors == 0 && unchecked.is_some() {
        let _ = writeln!(out, "{}labels not checked{}: no problem found in what was", p.warning, p.reset);
    } else if errors == 0 {
        let _ = writeln!(out, "{}ok{}: every batch passed", p.help, p.reset);
    } else {
        let _ = writeln!(
            out,
            "{}{errors} problem{} found{}",
            p.error,
            if errors == 1 { "" } else { "s" },
            p.reset
        );
    }
    out
}
