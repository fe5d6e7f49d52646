//! assertscope's own output read back: a `GuardError` the guard raised (in a log saved
//! from `assertscope run … > log`, a notebook cell under `assertscope.guard()`, a torchrun
//! rank file). It names the cause, the op and the user's line itself, before any kernel
//! ran, so it is the strongest evidence a log can hold.
//!
//! The human form, as `python/assertscope/errors.py` builds it:
//!
//! ```text
//! assertscope.GuardError: cross_entropy: class target out of range [target-out-of-range]
//!   --> train.py:48 in main
//!    |     loss = criterion(logits, y)
//!    = found: 1 of 4 targets outside [0, 3) (C = 3, ignore_index = -100): 3 at [3]
//! ```

use super::{Failure, Strength};
use crate::kb::KnowledgeBase;
use crate::log::traceback::ExceptionText;
use crate::report::Location;
use regex::Regex;
use serde_json::Map;
use std::sync::OnceLock;

struct Patterns {
    headline: Regex,
    location: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        headline: Regex::new(r"^(?P<op>[\w.]+): (?P<title>.+) \[(?P<cause>[a-z][a-z-]*)\]$").unwrap(),
        location: Regex::new(r"^--> (?P<file>.+):(?P<line>\d+)(?: in (?P<func>.+))?$").unwrap(),
    })
}

/// The failure a GuardError states, when the exception is one.
pub(super) fn failure<'a>(kb: &'static KnowledgeBase, si: usize, exc: &ExceptionText) -> Option<Failure<'a>> {
    let type_name = exc.type_name.as_deref()?;
    if type_name.rsplit('.').next() != Some("GuardError") {
        return None;
    }
    let headline = patterns().headline.captures(exc.message.trim())?;
    let cause = &headline["cause"];
    kb.cause(cause)?;
    let mut location: Option<Location> = None;
    let mut found = None;
    for line in &exc.continuation {
        let line = line.trim();
        if let Some(c) = patterns().location.captures(line) {
            location = Some(Location {
                file: c["file"].to_string(),
                line: c["line"].parse().ok(),
                function: c.name("func").map(|f| f.as_str().to_string()),
                code: None,
            });
        } else if let Some(code) = line.strip_prefix('|') {
            if let Some(l) = location.as_mut() {
                l.code = Some(code.trim().to_string()).filter(|c| !c.is_empty());
            }
        } else if let Some(f) = line.strip_prefix("= found:") {
            found = Some(f.trim().to_string());
        }
    }
    let op = headline["op"].to_string();
    let text = match &found {
        Some(f) => format!("{op}: {f}"),
        None => exc.message.trim().to_string(),
    };
    Some(Failure {
        strength: Strength::Guard,
        cause: Some(cause.to_string()),
        op: Some(op),
        title: Some(headline["title"].to_string()),
        hint: None,
        values: Map::new(),
        text,
        at: (si, exc.log_line),
        traceback: None,
        assertion: None,
        followon: None,
        tolerant: false,
        stated_location: location,
    })
}
