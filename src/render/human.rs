//! The human rendering, in the manner of rustc's diagnostics: what happened, where in
//! the user's code, what was found, then why and the fix.

use super::style::Palette;
use super::text;
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::kb::KnowledgeBase;
use crate::report::{Diagnosis, Location, Report};
use std::fmt::Write as _;

fn checklist_step_text(step: u8) -> &'static str {
    KnowledgeBase::get().step(step).map_or("", |s| s.text.as_str())
}

/// Renders a report. `subject` names what was examined ("the log", "the run").
pub fn render(report: &Report, p: &Palette, subject: &str) -> String {
    text::render(&diagnostics(report, subject), p.enabled())
}

/// The report as the shared diagnostic model: the root cause, its consequences, then any
/// further causes.
pub fn diagnostics(report: &Report, subject: &str) -> Vec<Diagnostic> {
    let Some(root) = report.root() else {
        return vec![Diagnostic::new(Severity::Note, None, format!("no error found in {subject}"))];
    };
    if root.cause == "none" {
        let mut d = Diagnostic::new(
            Severity::Note,
            None,
            format!("no tensor or CUDA error found in {subject}; it ends in a plain Python error"),
        );
        if let Some(loc) = &root.location {
            d = d.span(location_span(loc, None));
        }
        return vec![d.note("note", root.title.trim_start_matches("no tensor or CUDA error: "))];
    }
    let mut out = vec![diagnostic(root)];
    if !report.secondary.is_empty() {
        let mut also =
            Diagnostic::new(Severity::Note, None, format!("also in {subject} (consequences, not causes)"));
        for s in &report.secondary {
            also = also.note(s.cause.as_str(), s.text.as_str());
        }
        out.push(also);
    }
    out.extend(report.diagnoses.iter().skip(1).map(diagnostic));
    out
}

/// One diagnosis: the user's line and where the value came from, the evidence, then why,
/// the fix, the checklist step and where to read more. `python/assertscope/_human.py`
/// builds the same model (tests/render_parity.rs compares the two).
pub fn diagnostic(d: &Diagnosis) -> Diagnostic {
    let severity = if d.cause == "cascade" || d.cause == "distributed-peer-failure" {
        Severity::Warning
    } else {
        Severity::Error
    };
    let mut out = Diagnostic::new(severity, Some(&d.cause), d.title.as_str());
    let surfaced = d.evidence.iter().any(|e| e.kind == "surfaced");
    if let Some(loc) = &d.location {
        let what = if surfaced { Some("the error surfaced here, not where it happened") } else { None };
        out = out.span(location_span(loc, what));
    }
    let mut found = false;
    for e in d.evidence.iter().filter(|e| e.kind != "surfaced") {
        out = match (e.kind.as_str(), e.text.split_once(": ")) {
            ("guard", _) => {
                // The op is in the title: the finding alone.
                found = true;
                let own = d.op.as_deref().and_then(|op| e.text.strip_prefix(op)?.strip_prefix(": "));
                out.note(crate::contract::guard_text::FOUND_NOTE, own.unwrap_or(&e.text))
            }
            ("tensor", Some((name, summary))) => out.note(name, summary),
            (kind, _) => match e.source_line {
                Some(line) => out.note(kind, format!("{} (log line {line})", e.text)),
                None => out.note(kind, e.text.as_str()),
            },
        };
    }
    if let Some(op) = d.op.as_deref().filter(|op| !names(&d.title, op)) {
        out = out.note("op", op);
    }
    // A `node` line ("rank 1 ran on node …") names the rank already.
    let placed = |rank: u32| {
        d.evidence.iter().any(|e| e.kind == "node" && e.text.starts_with(&format!("rank {rank} ")))
    };
    if let Some(rank) = d.rank.filter(|r| !placed(*r)) {
        out = out.note("rank", rank.to_string());
    }
    let shown = values_text(&d.values);
    if !shown.is_empty() && !found {
        // A guard's finding and tensor lines already say every value, rounded for reading.
        out = out.note("values", shown);
    }
    if let Some(samples) = dataset_note(d) {
        out = out.note("dataset", samples);
    }
    // Where the bad value came from: secondary spans.
    for (at, label) in origin_steps(d) {
        out = out.span(source_span(&at).label(label).secondary());
    }
    out = out.section("why", d.explanation.as_str()).section("fix", d.fix.as_str());
    if let Some(step) = d.checklist_step {
        out = out.section(format!("checklist step {step}"), checklist_step_text(step));
    }
    out.section("more", format!("assertscope rules {}", d.cause))
}

/// The origin's steps as (where, label): numbered along the path from the refused value
/// back to the line that made it, as rustc numbers a value's moves, a size trail beside a
/// value trail numbered on its own ("size 1."), then where the trail ends. Steps on one
/// line share one label ("2. and size 2. made here: …"), so that the line is drawn once.
fn origin_steps(d: &Diagnosis) -> Vec<(Location, String)> {
    let chains: Vec<&str> = d.origin.iter().filter_map(|o| o.chain.as_deref()).collect();
    let mixed = chains.iter().any(|c| *c != chains[0]);
    let mut numbers: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut number = 0;
    // (where, the step's number or numbers, what it says)
    let mut steps: Vec<(Location, String, String)> = Vec::new();
    let mut add = |at: Location, prefix: String, body: String| match steps
        .iter_mut()
        .find(|(seen, ..)| seen.file == at.file && seen.line == at.line)
    {
        Some((_, seen_prefix, seen_body)) if *seen_body == body && !seen_prefix.is_empty() => {
            *seen_prefix = format!("{seen_prefix}. and {prefix}");
        }
        Some((_, seen_prefix, seen_body)) => {
            *seen_body = format!("{}; {}", numbered(seen_prefix, seen_body), numbered(&prefix, &body));
            seen_prefix.clear();
        }
        None => steps.push((at, prefix, body)),
    };
    for o in &d.origin {
        let (prefix, body) = match (o.chain.as_deref(), o.note.clone()) {
            (Some(chain), note) => {
                let n = numbers.entry(chain).or_insert(0);
                *n += 1;
                if chain == chains[0] {
                    number = *n;
                }
                let prefix = if mixed && chain != chains[0] { format!("{chain} {n}") } else { n.to_string() };
                let note = note.unwrap_or_default();
                (prefix, if o.role == "made" { format!("made here: {note}") } else { note })
            }
            (None, Some(note)) => (String::new(), note),
            (None, None) => (
                String::new(),
                match o.role.as_str() {
                    "data" => "the bad value was made here".to_string(),
                    "call" => "the op that asserted ran here".to_string(),
                    role => format!("{role} defined here"),
                },
            ),
        };
        add(o.location(), prefix, body);
    }
    // A trail that ends on the user's own line before any step ("`ids` is not bound in this
    // file") draws that line a second time and says nothing of where the value came from.
    let at_the_start = |file: &str, line: Option<u64>| {
        d.origin.is_empty() && d.location.as_ref().is_some_and(|l| l.file == file && l.line == line)
    };
    if let Some(end) = d.origin_end.as_ref().filter(|e| !at_the_start(&e.file, e.line)) {
        let at = Location {
            file: end.file.clone(),
            line: end.line,
            function: end.function.clone(),
            code: end.code.clone(),
        };
        add(at, (number + 1).to_string(), end.note.clone());
    }
    steps.into_iter().map(|(at, prefix, body)| (at, numbered(&prefix, &body))).collect()
}

fn numbered(prefix: &str, body: &str) -> String {
    if prefix.is_empty() {
        body.to_string()
    } else {
        format!("{prefix}. {body}")
    }
}

/// The dataset indices of the bad samples, with what one of them holds.
fn dataset_note(d: &Diagnosis) -> Option<String> {
    let indices: Vec<i64> = match &d.dataset_indices {
        Some(i) => i.clone(),
        None => d
            .values
            .get("dataset_indices")?
            .as_array()?
            .iter()
            .filter_map(serde_json::Value::as_i64)
            .collect(),
    };
    if indices.is_empty() {
        return None;
    }
    const SHOWN: usize = 8;
    let mut list: Vec<String> = indices.iter().take(SHOWN).map(i64::to_string).collect();
    if indices.len() > SHOWN {
        list.push(format!("… ({} in all)", indices.len()));
    }
    let what = if indices.len() == 1 { "the bad sample is index" } else { "the bad samples are indices" };
    let sample = d
        .values
        .get("dataset_sample")
        .and_then(|s| s.as_str())
        .map_or(String::new(), |s| format!("; index {}: {s}", indices[0]));
    Some(format!("{what} {} of the DataLoader's dataset{sample}", list.join(", ")))
}

/// Whether the title names the op as a word of its own.
fn names(title: &str, op: &str) -> bool {
    title.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')).any(|word| word == op)
}

/// Values shown elsewhere: the assertion's own message and thread count and the line of a
/// metric are in the evidence, the dataset's indices and sample in the `dataset` note.
const HIDDEN_VALUES: [&str; 5] =
    ["assert_message", "metric_line", "failing_threads", "dataset_indices", "dataset_sample"];

/// Values a log revealed, worth showing: `key=value, …`, numbers rounded for reading. The
/// assertion's own message and thread count, and the line of a metric, are in the evidence.
pub fn values_text(values: &serde_json::Map<String, serde_json::Value>) -> String {
    values
        .iter()
        .filter(|(k, _)| !HIDDEN_VALUES.contains(&k.as_str()))
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={}", compact(other)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn compact(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Number(n) => {
            match n.as_i64().map(|i| i.to_string()).or_else(|| n.as_u64().map(|u| u.to_string())) {
                Some(whole) => whole,
                None => crate::contract::guard_text::readable_number(n.as_f64().unwrap_or(f64::NAN)),
            }
        }
        Value::Array(items) => format!("[{}]", items.iter().map(compact).collect::<Vec<_>>().join(",")),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}:{}", Value::from(k.as_str()), compact(v)))
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => other.to_string(),
    }
}

/// The user's frame: the line as it is on disk now (the log's copy otherwise), labelled
/// with its function and, when CUDA reported late, that it is not where the error happened.
fn location_span(loc: &Location, what: Option<&str>) -> Span {
    let label = match (loc.function.as_deref(), what) {
        (Some(f), Some(what)) => Some(format!("in `{f}`: {what}")),
        (Some(f), None) => Some(format!("in `{f}`")),
        (None, Some(what)) => Some(what.to_string()),
        (None, None) => None,
    };
    let span = source_span(loc);
    match label {
        Some(label) => span.label(label),
        None => span,
    }
}

/// A span at `loc` showing the line as it is on disk now (the log's copy otherwise).
fn source_span(loc: &Location) -> Span {
    let on_disk =
        loc.line.and_then(|line| crate::diagnostic::read_line(std::path::Path::new(&loc.file), line));
    Span::at(loc.file.as_str(), loc.line).source(on_disk.or_else(|| loc.code.clone()))
}

fn write_wrapped(out: &mut String, label: &str, text: &str) {
    let name = crate::log::line::strip_ansi(label).chars().count();
    let indent = format!("\n{}", " ".repeat(name + 2));
    let _ = writeln!(
        out,
        "{label}: {}",
        crate::diagnostic::wrap::wrap(text, text::WIDTH - name - 2).replace('\n', &indent)
    );
}

/// `assertscope rules ID`: a cause, explained in full.
pub fn explain_cause(kb: &KnowledgeBase, id: &str, p: &Palette) -> Option<String> {
    let c = kb.cause(id)?;
    let mut out = String::new();
    let _ = writeln!(out, "{}{}{}: {}\n", p.bold, c.id, p.reset, c.title);
    write_wrapped(&mut out, &format!("{}why{}", p.note, p.reset), &c.explanation_and_sources(None));
    out.push('\n');
    write_wrapped(&mut out, &format!("{}fix{}", p.help, p.reset), &c.fix);
    out.push('\n');
    let _ = writeln!(out, "{}example{}:", p.bold, p.reset);
    for l in c.example.trim().lines() {
        let _ = writeln!(out, "    {l}");
    }
    if let Some(step) = c.checklist_step() {
        let _ = writeln!(out, "\n{}checklist step {step}{}: {}", p.dim, p.reset, checklist_step_text(step));
    }
    let kernels: Vec<&str> = kb
        .asserts
        .iter()
        .filter(|a| a.cause == id && !a.internal)
        .map(|a| if a.kernel.is_empty() { a.condition.as_str() } else { a.kernel.as_str() })
        .collect();
    if !kernels.is_empty() {
        let mut uniq = kernels.clone();
        uniq.sort();
        uniq.dedup();
        let _ = writeln!(out, "\n{}kernels that assert it{}: {}", p.bold, p.reset, uniq.join(", "));
    }
    let messages: Vec<&str> =
        kb.messages.iter().filter(|m| m.cause == id).map(|m| m.example.as_str()).collect();
    if !messages.is_empty() {
        let _ = writeln!(out, "{}host-side messages{}:", p.bold, p.reset);
        for m in messages {
            let _ = writeln!(out, "    {m}");
        }
    }
    Some(out)
}
