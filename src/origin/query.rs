//! A diagnosis and its runtime facts as the flow engine's questions: which frames, which
//! operand of which op, what chain to follow (a value, a shape, a dtype), which values
//! were bad, what the process observed, and which modules' sizes to follow.

use super::runtime::Runtime;
use crate::report::Diagnosis;
use assertscope_flow::slice::{BadValues, Chain, Frame, Observed, Operand, Query, SizeQuery, Sources, Stamp};
use serde_json::Value;
use std::path::PathBuf;

/// What a cause's trail follows, and the op's parameter that held it; `None` for causes
/// whose origin is not a value in the user's code (out of memory, a device mismatch).
pub fn chain_of(cause: &str) -> Option<(Chain, &'static str)> {
    Some(match cause {
        "target-out-of-range" => (Chain::Value, "target"),
        "embedding-index-out-of-range" => (Chain::Value, "input"),
        "index-out-of-bounds" => (Chain::Value, "index"),
        "ctc-loss" => (Chain::Value, "targets"),
        "invalid-probabilities" | "nan-inf" | "bce-input-range" => (Chain::Value, "input"),
        "target-shape" => (Chain::Shape, "target"),
        "target-dtype" => (Chain::Dtype, "target"),
        "batch-size-mismatch" | "batchnorm-single-sample" => (Chain::Shape, "input"),
        _ => return None,
    })
}

/// Causes whose values broke a size the flow can find: the classes a head scores, the
/// rows of a table, `one_hot`'s count, the length of an indexed tensor.
pub fn has_size(cause: &str) -> bool {
    matches!(
        cause,
        "target-out-of-range" | "embedding-index-out-of-range" | "index-out-of-bounds" | "ctc-loss"
    )
}

/// The question about the refused value, with the frames to start from.
pub fn value_query(d: &Diagnosis, runtime: Option<&Runtime>, frames: Vec<Frame>) -> Option<Query> {
    let (chain, parameter) = chain_of(&d.cause)?;
    let operand_fact = runtime.and_then(|r| r.operand.as_ref());
    let op = d.op.clone();
    let parameter = operand_fact
        .and_then(|o| o.parameter.clone())
        .unwrap_or_else(|| parameter_for(&d.cause, op.as_deref(), parameter).to_string());
    let holders = runtime.and_then(|r| r.frames.first()).map(|f| f.holders.clone()).unwrap_or_default();
    let operand =
        Operand { op, parameter: Some(parameter), position: operand_fact.and_then(|o| o.index), holders };
    let rows = matches!(d.cause.as_str(), "batch-size-mismatch" | "batchnorm-single-sample");
    let mut bad = bad_values(d);
    // An RNN's initial state: the batch size it was built for is the value followed.
    if let Some(state_batch) = d.values.get("hidden_batch").and_then(Value::as_f64).filter(|_| rows) {
        bad.values = vec![state_batch];
    }
    Some(Query { frames, operand, chain: Some(chain), rows, bad, observed: observed(runtime) })
}

/// The refused parameter's name in the op's own signature.
fn parameter_for(cause: &str, op: Option<&str>, parameter: &'static str) -> &'static str {
    match (cause, op) {
        (_, Some("one_hot")) => "tensor",
        (_, Some("ctc_loss")) => "targets",
        (_, Some("multinomial")) => "input",
        // An RNN's initial state built for another batch size than the input's.
        ("batch-size-mismatch", Some("lstm" | "gru" | "rnn" | "rnn_tanh" | "rnn_relu")) => "hx",
        _ => parameter,
    }
}

/// The frames of the failing call: the runtime's, else those given (a traceback's), else
/// the diagnosis' location.
pub fn frames(d: &Diagnosis, runtime: Option<&Runtime>, given: &[Frame]) -> Vec<Frame> {
    if let Some(r) = runtime.filter(|r| !r.frames.is_empty()) {
        return r
            .frames
            .iter()
            .map(|f| Frame {
                file: PathBuf::from(&f.file),
                line: f.line as usize,
                function: f.function.clone(),
                columns: None,
            })
            .collect();
    }
    if !given.is_empty() {
        return given.to_vec();
    }
    d.location
        .iter()
        .filter_map(|l| {
            Some(Frame {
                file: PathBuf::from(&l.file),
                line: l.line? as usize,
                function: l.function.clone(),
                columns: None,
            })
        })
        .collect()
}

/// The values the op refused, as numbers: those the guard listed, else those the
/// extremes show outside the bound.
pub fn bad_values(d: &Diagnosis) -> BadValues {
    let values = &d.values;
    let numbers = |key: &str| -> Vec<f64> {
        match values.get(key) {
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_f64).collect(),
            Some(v) => v.as_f64().into_iter().collect(),
            None => Vec::new(),
        }
    };
    let bound =
        ["bound", "classes", "num_embeddings"].iter().find_map(|k| values.get(*k).and_then(Value::as_f64));
    if d.cause == "nan-inf" {
        return BadValues { values: Vec::new(), non_finite: true, bound, zero_rows: false };
    }
    if d.cause == "bce-input-range" {
        // The refused values (outside [0, 1]): a source that provably cannot hold one of
        // them (`label.fill_(1)`) is not followed.
        let mut refused = numbers("bad_values");
        refused.retain(|v| v.is_finite());
        return BadValues { values: refused, ..BadValues::default() };
    }
    if d.cause == "invalid-probabilities" {
        // Rows that sum to 0 with no NaN, inf or negative value hold only zeros.
        let count = |key: &str| values.get(key).and_then(Value::as_u64).unwrap_or(0);
        let zero_rows = count("zero_sum_rows") > 0
            && ["nan_rows", "inf_rows", "negative_rows"].iter().all(|k| count(k) == 0);
        let values = if zero_rows { vec![0.0] } else { Vec::new() };
        return BadValues { values, zero_rows, ..BadValues::default() };
    }
    let mut bad = numbers("distinct_bad_values");
    if bad.is_empty() {
        bad = numbers("bad_values");
    }
    if bad.is_empty() {
        bad = numbers("value");
    }
    if bad.is_empty() {
        let (min, max) = (numbers("min").first().copied(), numbers("max").first().copied());
        if let Some(min) = min.filter(|m| *m < 0.0) {
            bad.push(min);
        }
        if let (Some(max), Some(b)) = (max, bound) {
            if max >= b {
                bad.push(max);
            }
        }
    }
    bad.sort_by(f64::total_cmp);
    bad.dedup();
    BadValues { values: bad, non_finite: false, bound, zero_rows: false }
}

fn observed(runtime: Option<&Runtime>) -> Observed {
    let Some(r) = runtime else { return Observed::default() };
    Observed {
        lines: r
            .observed
            .iter()
            .map(|o| (PathBuf::from(&o.file), o.line as usize, o.name.clone().unwrap_or_default()))
            .collect(),
        live: r.live.iter().map(|l| (l.class.clone(), l.attribute.clone(), l.holds_bad_value)).collect(),
        datasets: r
            .dataset
            .iter()
            .flat_map(|d| &d.chain)
            .map(|level| {
                (
                    level.class.clone(),
                    level.file.as_ref().map(PathBuf::from),
                    level.getitem_line.map(|l| l as usize),
                )
            })
            .collect(),
    }
}

/// The size questions the runtime's modules ask: those whose size the guard judged (it
/// names the size argument). A module named without one is the module the op ran with
/// (an RNN whose state has another batch size): its sizes are not what broke.
pub fn size_queries(runtime: Option<&Runtime>) -> Vec<SizeQuery> {
    let Some(r) = runtime else { return Vec::new() };
    r.modules
        .iter()
        .filter(|m| !m.sites.is_empty() && m.size_argument.is_some())
        .map(|m| SizeQuery {
            class: m.class.clone(),
            argument: m.size_argument.clone(),
            sites: m
                .sites
                .iter()
                .map(|s| Frame {
                    file: PathBuf::from(&s.file),
                    line: s.line as usize,
                    function: s.function.clone(),
                    columns: None,
                })
                .collect(),
            size: m.size,
            need: m.need,
            note: m.note.clone(),
        })
        .collect()
}

/// Where the engine reads source: the runtime's cell texts and file stamps, the process'
/// start, and the project around the outermost frame.
pub fn sources(runtime: Option<&Runtime>, frames: &[Frame]) -> Sources {
    let mut sources = Sources::default();
    if let Some(r) = runtime {
        sources.texts = r.sources.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        sources.started = r.process_start;
        for f in &r.frames {
            if let (Some(size), Some(mtime_ns)) = (f.size, f.mtime_ns) {
                sources.stamps.insert(PathBuf::from(&f.file), Stamp { size, mtime_ns });
            }
        }
    }
    sources.root = frames.iter().rev().find(|f| f.file.is_file()).and_then(|f| {
        f.file.parent().map(|p| if p.as_os_str().is_empty() { PathBuf::from(".") } else { p.to_path_buf() })
    });
    sources
}
