//! assertscope's own output read back: a `GuardError` the guard raised (in a log saved
//! from a guarded script, a notebook cell under `assertscope.guard()`, a torchrun rank
//! file). It names the cause, the op and the user's line itself, before any kernel ran, so
//! it is the strongest evidence a log can hold.
//!
//! The layout is part of the contract with the Python package ([`crate::contract::guard_text`]):
//! the headline, the `-->` line, the source line and its label, the `found` note and one
//! note per tensor. Under `assertscope run` the message is the headline alone (the run's
//! own report follows); the traceback above it then gives the user's line.

use super::failure::{Failure, Strength};
use crate::contract::guard_text;
use crate::kb::KnowledgeBase;
use crate::log::traceback::ExceptionText;
use crate::report::Location;
use serde_json::{Map, Value};

/// The failure a GuardError states, when the exception is one.
pub(super) fn failure<'a>(kb: &'static KnowledgeBase, si: usize, exc: &ExceptionText) -> Option<Failure<'a>> {
    let type_name = exc.type_name.as_deref()?;
    if type_name.rsplit('.').next() != Some("GuardError") {
        return None;
    }
    let (cause, title) = guard_text::parse_headline(&exc.message)?;
    let cause_title = &kb.cause(cause)?.title;
    let op = guard_text::op_of_title(title, cause_title).map(str::to_string);
    let report = read_report(&exc.continuation);
    let mut values = report.values;
    if let Some(first) = values.get("bad_values").and_then(|v| v.get(0)).cloned() {
        // The name explain gives the offending value, which its hints read.
        values.insert("value".into(), first);
    }
    let text = match (&op, &report.found) {
        (Some(op), Some(found)) => format!("{op}: {found}"),
        _ => exc.message.trim().to_string(),
    };
    Some(Failure {
        strength: Strength::Guard,
        cause: Some(cause.to_string()),
        op,
        title: Some(title.to_string()),
        hint: None,
        values,
        text,
        at: (si, exc.log_line),
        traceback: None,
        assertion: None,
        followon: None,
        tolerant: false,
        stated_location: report.location,
    })
}

#[derive(Default)]
struct ReadBack {
    location: Option<Location>,
    found: Option<String>,
    values: Map<String, Value>,
}

/// The location, the `found` note and the values of the lines under the headline.
fn read_report(lines: &[String]) -> ReadBack {
    let mut out = ReadBack::default();
    let mut notes: Vec<(String, String)> = Vec::new();
    for line in lines.iter().map(|l| l.trim()) {
        if let Some((file, number, _)) = guard_text::parse_location(line) {
            if out.location.is_none() {
                out.location =
                    Some(Location { file: file.into(), line: Some(number), function: None, code: None });
            }
        } else if let Some(note) = line.strip_prefix("= ") {
            let (kind, text) = note.split_once(": ").unwrap_or(("", note));
            notes.push((kind.to_string(), text.to_string()));
        } else if let Some(last) = notes.last_mut().filter(|_| !line.starts_with('|')) {
            // A note wrapped onto the next line.
            last.1.push(' ');
            last.1.push_str(line);
        } else if let Some(location) = out.location.as_mut() {
            read_snippet_line(line, location);
        }
    }
    for (kind, text) in notes {
        if kind == guard_text::FOUND_NOTE {
            out.values.extend(guard_text::parse_found(&text));
            out.found = Some(text);
        } else if let Some(shape) = guard_text::parse_shape(&text) {
            out.values.insert(format!("{kind}_shape"), shape.into());
        }
    }
    out
}

/// The user's source line (`32 |     loss = …`) and the function its label names
/// (`| ^^^^ in `main``).
fn read_snippet_line(line: &str, location: &mut Location) {
    if let Some((number, code)) = line.split_once(" |") {
        if number.parse::<u64>().ok() == location.line && location.code.is_none() {
            location.code = Some(code.trim().to_string()).filter(|c| !c.is_empty());
        }
    } else if let Some(marks) = line.strip_prefix('|') {
        let label = marks.trim_start().trim_start_matches('^').trim_start();
        let function = label.strip_prefix("in `").and_then(|rest| rest.split_once('`')).map(|(f, _)| f);
        if location.function.is_none() && marks.contains('^') {
            location.function = function.map(str::to_string);
        }
    }
}
