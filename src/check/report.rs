//! Findings into the `assertscope.diagnosis/1` report: errors become diagnoses (title,
//! explanation and fix from the knowledge base, the specific finding as the first piece
//! of evidence), warnings and notes become secondary entries.

use super::checks::{Finding, Severity};
use super::site::{self, from_kb, Site};
use super::stats::{Example, Stats};
use super::Inspection;
use crate::diagnostic::{read_line, Span};
use crate::report::{Confidence, Diagnosis, Location, Report, Secondary};
use serde_json::{json, Map, Value};

pub fn build(inspection: &Inspection) -> Report {
    let mut report = Report::default();
    for f in &inspection.findings {
        match f.severity {
            Severity::Error => report.diagnoses.push(site::diagnosis(&FileRows(inspection), f)),
            _ => {
                let text = match &f.fix {
                    Some(fix) => format!("{} {fix}", f.message.trim_end_matches('.').to_string() + "."),
                    None => f.message.clone(),
                };
                report.secondary.push(Secondary { cause: f.cause.to_string(), text })
            }
        }
    }
    if report.diagnoses.is_empty() {
        report.diagnoses.push(clean(inspection));
    }
    report
}

/// The examples of `check`: rows (or pixels) of data files.
pub struct FileRows<'a>(pub &'a Inspection);

impl Site for FileRows<'_> {
    fn message(&self, f: &Finding) -> String {
        f.message.clone()
    }

    fn describe(&self, e: &Example) -> String {
        describe(self.0, e)
    }

    fn example_kind(&self) -> &'static str {
        "value"
    }

    fn source_line(&self, e: &Example) -> Option<u64> {
        e.at.line
    }

    fn location(&self, f: &Finding) -> Option<Location> {
        let inspection = self.0;
        f.examples
            .first()
            .map(|e| Location {
                file: file_name(inspection, e.file),
                line: e.at.line,
                function: None,
                code: None,
            })
            .or_else(|| {
                (inspection.files.len() == 1).then(|| Location {
                    file: file_name(inspection, 0),
                    line: None,
                    function: None,
                    code: None,
                })
            })
    }

    fn values(&self, f: &Finding) -> Map<String, Value> {
        let mut values = summary(self.0);
        values.extend(f.values.clone());
        if !f.examples.is_empty() {
            values
                .insert("first_rows".into(), json!(f.examples.iter().map(|e| e.at.row).collect::<Vec<_>>()));
        }
        values
    }

    /// Where the first offending value sits, with its line of text when it has one.
    fn span(&self, f: &Finding) -> Option<(Span, usize)> {
        let inspection = self.0;
        let first = f.examples.first()?;
        let file = inspection.files.get(first.file as usize);
        let line = text_line(inspection, first);
        let source = file.zip(line).and_then(|(file, line)| read_line(&file.path, line));
        let span = Span::at(file_name(inspection, first.file), line);
        let span = match source {
            Some(text) => span.source(Some(text)).label(place_and_value(inspection, first)),
            None => span.label(describe(inspection, first)),
        };
        Some((span, 1))
    }
}

/// The `none` diagnosis of clean data, carrying the summary and the class counts.
fn clean(inspection: &Inspection) -> Diagnosis {
    let mut values = summary(inspection);
    let counts = class_counts(&inspection.stats);
    if !counts.is_empty() {
        values.insert("class_counts".into(), Value::Object(counts));
    }
    from_kb("none", Confidence::High, None, Vec::new(), values)
}

/// Rows, files, min, max and the bound: the numbers every diagnosis carries.
fn summary(inspection: &Inspection) -> Map<String, Value> {
    let s = &inspection.stats;
    let mut m = Map::new();
    m.insert("rows".into(), json!(s.rows()));
    m.insert("values".into(), json!(s.value_count()));
    m.insert("files".into(), json!(inspection.files.len()));
    if let Some((min, max)) = s.int_range() {
        m.insert("min".into(), json!(min));
        m.insert("max".into(), json!(max));
    }
    if let Some(b) = &inspection.bound {
        m.insert("bound".into(), json!(b.value));
    }
    m.insert("task".into(), json!(inspection.task.name()));
    m.insert("dtype".into(), json!(inspection.dtype()));
    m
}

/// Counts per class id, for up to 1,000 ids.
fn class_counts(s: &Stats) -> Map<String, Value> {
    let mut m = Map::new();
    let last = s.hist.iter().rposition(|&c| c > 0);
    if let Some(last) = last.filter(|&l| l < 1000) {
        for (v, c) in s.hist.iter().enumerate().take(last + 1) {
            m.insert(v.to_string(), json!(c));
        }
    }
    m
}

pub fn file_name(inspection: &Inspection, file: u32) -> String {
    inspection.files.get(file as usize).map(|f| f.display()).unwrap_or_default()
}

/// "labels.csv:19: row 17: 10", "masks/a.png: pixel (x 3, y 4): 21", "y.npy: row 5, column 2: 1".
pub fn describe(inspection: &Inspection, e: &Example) -> String {
    let file = file_name(inspection, e.file);
    match text_line(inspection, e) {
        Some(line) => format!("{file}:{line}: {}", place_and_value(inspection, e)),
        None => format!("{file}: {}", place_and_value(inspection, e)),
    }
}

/// The line of a text file the example sits on (none for images and binary formats).
pub fn text_line(inspection: &Inspection, e: &Example) -> Option<u64> {
    match inspection.column.layout {
        super::read::Layout::Image => None,
        _ => e.at.line,
    }
}

/// "row 17: 10", "pixel (x 3, y 4): 21", "row 5, position 2: 1".
pub fn place_and_value(inspection: &Inspection, e: &Example) -> String {
    let at = &e.at;
    let place = match (inspection.column.layout, at.pos) {
        (super::read::Layout::Image, Some(x)) => format!("pixel (x {x}, y {})", at.row),
        (super::read::Layout::Image, None) => "the image".to_string(),
        (_, Some(p)) => format!("row {}, position {p}", at.row),
        (_, None) => format!("row {}", at.row),
    };
    format!("{place}: {}", e.value)
}
