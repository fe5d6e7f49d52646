//! The origin of a bad value: the diagnosis' op, its refused operand and the user's frames
//! (a guard report's runtime facts, or a traceback's frames) handed to the flow engine
//! (`assertscope-flow`'s backward slice), and its answer written back into the
//! diagnosis: `origin` (the proved steps, the last one "made here"), `origin_end` (where
//! the trail stops, when it stops early) and `dataset_indices`. `assertscope origin`,
//! `run` and `explain` call [`trace`]; the protocol with the guard is `docs/origin.md`.
//!
//! A failure inside the analysis never hides the diagnosis: it is caught and said in one
//! note. With `ASSERTSCOPE_ORIGIN_STRICT=1` (the tests) it is raised instead.

mod query;
pub mod runtime;

use crate::report::{Diagnosis, Evidence, OriginEnd, OriginLocation};
use assertscope_flow::slice::{self, Frame, Step, Trail};
use runtime::Runtime;
use serde_json::Value;

/// Environment variable that turns a failure of the analysis into a panic (for tests).
pub const STRICT: &str = "ASSERTSCOPE_ORIGIN_STRICT";

/// The evidence kind of the origin's notes (why no path was drawn, or where it stops).
pub const NOTE_KIND: &str = "origin";

/// What the analysis found.
#[derive(Debug, Default)]
struct Found {
    steps: Vec<OriginLocation>,
    end: Option<OriginEnd>,
    notes: Vec<String>,
    traced: bool,
}

/// Fills `diagnosis` with the origin of its bad value. `frames` are a traceback's user
/// frames (innermost first) for `explain`; a guard report's `runtime` has its own.
pub fn trace(diagnosis: &mut Diagnosis, runtime: Option<&Runtime>, frames: &[Frame]) {
    let snapshot = diagnosis.clone();
    let strict = std::env::var_os(STRICT).is_some_and(|v| v == "1");
    let found = guarded(strict, || analyse(&snapshot, runtime, frames));
    apply(diagnosis, runtime, found);
}

/// Runs the analysis; a panic in it becomes one note (or, under [`STRICT`], goes on).
fn guarded(strict: bool, analysis: impl FnOnce() -> Found) -> Found {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(analysis));
    match result {
        Ok(found) => found,
        Err(panic) => {
            if strict {
                std::panic::resume_unwind(panic);
            }
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("an internal error");
            Found {
                notes: vec![format!("the origin analysis failed ({what}); no origin is drawn")],
                ..Found::default()
            }
        }
    }
}

fn analyse(d: &Diagnosis, runtime: Option<&Runtime>, given: &[Frame]) -> Found {
    let frames = query::frames(d, runtime, given);
    let sources = query::sources(runtime, &frames);
    let value = query::value_query(d, runtime, frames.clone());
    let mut sizes = query::size_queries(runtime);
    // The guard names the modules whose size it judged broken; without its facts (explain,
    // an older guard), the flow finds the module the op ran with.
    let by_flow = value.is_some() && query::has_size(&d.cause);
    // The flow finds the module the op ran with when the guard named none: without its
    // facts (explain, an older guard), or when it found no torch layer to judge (a weight
    // built by hand) though the values reach past the size they broke.
    let past_bound = value
        .as_ref()
        .is_some_and(|q| q.bad.bound.is_some_and(|bound| q.bad.values.iter().any(|v| *v >= bound)));
    let modules_by_flow = runtime.is_none() || past_bound;
    if value.is_none() && sizes.is_empty() {
        return Found::default();
    }
    slice::with_project(sources, |project| {
        let mut found = Found { traced: true, ..Found::default() };
        if let Some(q) = &value {
            let trail = slice::trace(project, q);
            add(&mut found, trail);
            if by_flow {
                let by_flow = slice::trace_size_by_flow(project, q, modules_by_flow && sizes.is_empty());
                // A void label the loss does not ignore is the loss's ignore_index at fault,
                // not the head the guard judged too small: once the flow reached the loss,
                // the heads' sizes are not drawn ("the data needs 256" would mislead).
                if slice::void_label(q).is_some() && !by_flow.steps.is_empty() {
                    sizes.clear();
                }
                add(&mut found, by_flow);
            }
        }
        for q in &sizes {
            add(&mut found, slice::trace_size(project, q));
        }
        found.notes = project.notes();
        found
    })
}

fn add(found: &mut Found, trail: Trail) {
    for step in trail.steps {
        if !found.steps.iter().any(|s| {
            s.file == step.file
                && s.line == Some(step.line as u64)
                && s.chain.as_deref() == Some(step.chain.as_str())
        }) {
            found.steps.push(location(step));
        }
    }
    if found.end.is_none() {
        found.end = trail.end.map(|e| OriginEnd {
            file: e.file,
            line: Some(e.line as u64),
            function: Some(e.function),
            code: Some(e.code).filter(|c| !c.is_empty()),
            note: e.note,
        });
    }
}

fn location(step: Step) -> OriginLocation {
    OriginLocation {
        file: step.file,
        line: Some(step.line as u64),
        function: Some(step.function),
        code: Some(step.code).filter(|c| !c.is_empty()),
        role: step.role.as_str().to_string(),
        chain: Some(step.chain.as_str().to_string()),
        note: Some(step.note),
        confirmed: step.confirmed,
    }
}

/// Writes what was found into the diagnosis: steps after any `call` location, the end
/// (only when no value step was made), the notes, the dataset's indices and sample.
fn apply(d: &mut Diagnosis, runtime: Option<&Runtime>, found: Found) {
    let made = found.steps.iter().any(|s| s.role == "made" && s.chain.as_deref() != Some("size"));
    if found.traced && (runtime.is_some() || !found.steps.is_empty() || found.end.is_some()) {
        d.origin.retain(|o| o.role == "call");
        d.origin.extend(found.steps);
        d.origin_end = if made { None } else { found.end };
    }
    for note in found.notes {
        d.evidence.push(Evidence { kind: NOTE_KIND.into(), text: note, source_line: None });
    }
    let dataset = runtime.and_then(|r| r.dataset.as_ref());
    let indices: Vec<i64> = match dataset.filter(|ds| !ds.indices.is_empty()) {
        Some(ds) => ds.indices.clone(),
        None => d
            .values
            .get("dataset_indices")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_i64).collect())
            .unwrap_or_default(),
    };
    if !indices.is_empty() {
        d.values.insert("dataset_indices".into(), Value::from(indices.clone()));
        d.dataset_indices = Some(indices);
    }
    if let Some(sample) = dataset.and_then(|ds| ds.sample.clone()) {
        d.values.insert("dataset_sample".into(), Value::from(sample));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagnosis() -> Diagnosis {
        serde_json::from_value(serde_json::json!({
            "cause": "target-out-of-range", "title": "t", "confidence": "high", "op": "cross_entropy",
            "location": null, "rank": null, "checklist_step": 2,
            "origin": [{"file": "train.py", "line": 3, "function": null, "code": null, "role": "data"}]
        }))
        .unwrap()
    }

    #[test]
    fn a_failure_of_the_analysis_is_one_note_and_never_hides_the_diagnosis() {
        let mut d = diagnosis();
        let found = guarded(false, || panic!("a bug in a rule"));
        apply(&mut d, None, found);
        assert_eq!(d.cause, "target-out-of-range");
        let notes: Vec<&str> =
            d.evidence.iter().filter(|e| e.kind == NOTE_KIND).map(|e| e.text.as_str()).collect();
        assert_eq!(notes, ["the origin analysis failed (a bug in a rule); no origin is drawn"]);
        // What an older guard found is kept when the analysis found nothing.
        assert_eq!(d.origin.len(), 1);
    }

    #[test]
    fn under_strict_a_failure_of_the_analysis_is_raised() {
        let raised = std::panic::catch_unwind(|| guarded(true, || panic!("a bug in a rule")));
        assert!(raised.is_err());
    }
}
