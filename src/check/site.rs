//! Where a finding's examples sit (rows of data files for `check`, samples of a dataset for
//! `scan`) and the one way a finding becomes a diagnosis (JSON) and a diagnostic (text)
//! wherever they sit.

use super::checks::{thousands, Finding};
use super::stats::Example;
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::report::{Confidence, Diagnosis, Evidence, Location};
use serde_json::{Map, Value};

/// Offending values shown per finding.
pub const SHOWN: usize = 5;

/// What a report needs to know of where the examples of a finding sit.
pub trait Site {
    /// The finding's message as shown.
    fn message(&self, f: &Finding) -> String;
    /// One example in words: "labels.csv:19: row 17: 10", "batch 3, dataset index 17: 7".
    fn describe(&self, e: &Example) -> String;
    /// What an example is called in the JSON evidence: "value" (a file's), "sample".
    fn example_kind(&self) -> &'static str;
    /// The line of a text file an example sits on, when it sits in one.
    fn source_line(&self, e: &Example) -> Option<u64>;
    /// Where the diagnosis points.
    fn location(&self, f: &Finding) -> Option<Location>;
    /// Every value the diagnosis carries: the finding's own and the site's.
    fn values(&self, f: &Finding) -> Map<String, Value>;
    /// The diagnostic's span, and how many of the examples it already shows.
    fn span(&self, f: &Finding) -> Option<(Span, usize)>;
}

/// An error finding as a diagnosis: title, explanation and fix from the knowledge base,
/// the finding as the first piece of evidence and each example after it.
pub fn diagnosis(site: &impl Site, f: &Finding) -> Diagnosis {
    let mut evidence = vec![Evidence { kind: "finding".into(), text: site.message(f), source_line: None }];
    evidence.extend(f.examples.iter().map(|e| Evidence {
        kind: site.example_kind().into(),
        text: site.describe(e),
        source_line: site.source_line(e),
    }));
    let mut diagnosis = from_kb(f.cause, f.confidence, site.location(f), evidence, site.values(f));
    if let Some(fix) = &f.fix {
        diagnosis.fix = fix.clone();
    }
    diagnosis
}

/// A finding drawn rustc-style: its place, the first few examples, how many more, and for
/// an error the fix (`help_for_others`: also the fix of a warning or note).
pub fn diagnostic(site: &impl Site, f: &Finding, help_for_others: bool) -> Diagnostic {
    let mut d = Diagnostic::new(f.severity, Some(f.cause), site.message(f));
    let mut in_span = 0;
    if let Some((span, shown)) = site.span(f) {
        d = d.span(span);
        in_span = shown;
    }
    for e in f.examples.iter().take(SHOWN).skip(in_span) {
        d = d.note("", site.describe(e));
    }
    let total = f.values.get("bad_count").and_then(|v| v.as_u64()).unwrap_or(0);
    let shown = f.examples.len().min(SHOWN) as u64;
    if total > shown && shown > 0 {
        d = d.note("", format!("… and {} more", thousands(total - shown)));
    }
    match (f.severity, &f.fix) {
        (Severity::Error, fix) => {
            with_cause_help(d, crate::kb::KnowledgeBase::get().expect_cause(f.cause), fix.as_deref())
        }
        (_, Some(fix)) if help_for_others => d.help(fix.as_str()),
        _ => d,
    }
}

/// `= help: <the fix>` and `= note: <title>; assertscope rules <id>`: the finding's own
/// fix when it has one (a hint for this very data), else its cause's first sentence.
pub fn with_cause_help(d: Diagnostic, cause: &crate::kb::Cause, fix: Option<&str>) -> Diagnostic {
    d.note("note", format!("{}; `assertscope rules {}` explains it", cause.title, cause.id))
        .help(fix.map_or_else(|| first_sentence(&cause.fix), str::to_string))
}

/// The first sentence of a KB paragraph (up to the first ". " outside code).
fn first_sentence(text: &str) -> String {
    let text = text.trim();
    let mut in_code = false;
    for (i, c) in text.char_indices() {
        match c {
            '`' => in_code = !in_code,
            '.' if !in_code && text[i + 1..].starts_with(' ') => return text[..=i].to_string(),
            _ => {}
        }
    }
    text.to_string()
}

/// A diagnosis of a knowledge-base cause: title, explanation, fix and checklist step
/// come from `kb/causes.toml`, the rest from the data.
pub fn from_kb(
    cause_id: &str,
    confidence: Confidence,
    location: Option<Location>,
    evidence: Vec<Evidence>,
    values: Map<String, Value>,
) -> Diagnosis {
    let cause = crate::kb::KnowledgeBase::get().expect_cause(cause_id);
    Diagnosis {
        cause: cause.id.clone(),
        title: cause.title.clone(),
        confidence,
        op: None,
        location,
        rank: None,
        evidence,
        explanation: cause.explanation_and_sources(offending_value(&values).as_deref()),
        values,
        fix: cause.fix.clone(),
        checklist_step: cause.checklist_step(),
        origin: Vec::new(),
        origin_end: None,
        dataset_indices: None,
    }
}

/// The value past the bound the data holds: its largest when that reaches the bound,
/// else its smallest when negative.
fn offending_value(values: &Map<String, Value>) -> Option<String> {
    let int = |k: &str| values.get(k).and_then(Value::as_i64);
    match (int("min"), int("max"), int("bound")) {
        (_, Some(max), Some(bound)) if max >= bound => Some(max.to_string()),
        (Some(min), _, _) if min < 0 => Some(min.to_string()),
        _ => None,
    }
}
