//! Values a diagnosis reports beyond the error message itself, and the hints they
//! trigger.

use crate::kb::KnowledgeBase;
use crate::log::LogScan;
use crate::report::Evidence;
use serde_json::{json, Map, Value};

/// Numbers in the explanatory message of a `[CUDA_KERNEL_ASSERT]` line, e.g. the
/// `output_size` argument (5) ... the `repeats` tensor (3).
pub fn from_printf_message(message: &str, values: &mut Map<String, Value>) {
    let numbers: Vec<i64> =
        message.split(|c: char| !(c.is_ascii_digit() || c == '-')).filter_map(|t| t.parse().ok()).collect();
    if !numbers.is_empty() {
        values.insert("reported".into(), Value::from(numbers));
    }
    values.insert("assert_message".into(), message.into());
}

/// Sizes the script printed before the failure, for the causes they bear on.
pub fn from_stated_sizes(
    cause: &str,
    scan: &LogScan,
    before_line: u64,
    values: &mut Map<String, Value>,
    evidence: &mut Vec<Evidence>,
) {
    let keys: &[&str] = match cause {
        "target-out-of-range" => &["num_classes", "num_labels"],
        "embedding-index-out-of-range" => &["vocab_size", "num_embeddings", "max_position_embeddings"],
        "index-out-of-bounds" => &["max_position_embeddings"],
        _ => return,
    };
    for key in keys {
        // The last statement before the failure is the one in force.
        let stated = scan.sizes.iter().rev().find(|s| s.key == *key && s.log_line <= before_line.max(1));
        let Some(stated) = stated.or_else(|| scan.sizes.iter().find(|s| s.key == *key)) else { continue };
        if values.contains_key(*key) {
            continue;
        }
        values.insert((*key).into(), stated.value.into());
        evidence.push(Evidence {
            kind: "stated".into(),
            text: stated.text.clone(),
            source_line: Some(stated.log_line),
        });
    }
}

/// The bad value a diagnosis is about, as a person reads it: `value` (what the error
/// named), else the first of the bad values found.
pub fn offending_value(values: &Map<String, Value>) -> Option<String> {
    let value = values.get("value").or_else(|| {
        ["bad_values", "distinct_bad_values"].iter().find_map(|k| values.get(*k)?.as_array()?.first())
    })?;
    match value {
        Value::Number(n) => Some(match n.as_i64() {
            Some(whole) => whole.to_string(),
            None => crate::contract::guard_text::readable_number(n.as_f64()?),
        }),
        _ => None,
    }
}

/// Hints from kb/hints.toml whose pattern the values show, rendered with the values
/// their placeholders name.
pub fn hints(kb: &KnowledgeBase, cause: &str, values: &Map<String, Value>) -> Vec<String> {
    let int = |k: &str| values.get(k).and_then(Value::as_i64);
    // Without a bound in the error itself, a size the script stated (reported as stated
    // evidence) still tells which mistake it is.
    let stated_bound = |keys: &[&str]| keys.iter().find_map(|k| int(k));
    let class_bound = int("bound").or_else(|| stated_bound(&["num_classes", "num_labels"]));
    let table_bound = int("bound").or_else(|| stated_bound(&["num_embeddings", "vocab_size"]));
    let chosen: Option<(&str, Value)> = match cause {
        "target-out-of-range" => match (int("value"), class_bound) {
            (Some(255), _) => Some(("void-label-255", json!({}))),
            (Some(v), Some(b)) if v == b => {
                Some(("one-based-labels", json!({"max": v, "last": v - 1, "needed": v + 1})))
            }
            (Some(v), Some(b)) if v > b => {
                Some(("head-too-small", json!({"max": v, "bound": b, "needed": v + 1, "last": b - 1})))
            }
            (Some(v), _) if v < 0 && v != -100 => Some(("padding-label", json!({ "value": v }))),
            _ => None,
        },
        "embedding-index-out-of-range" => match (int("value"), table_bound) {
            (Some(v), Some(b)) => Some(("tokens-added-without-resize", json!({"value": v, "bound": b}))),
            _ => None,
        },
        "nan-inf" => match (values.get("metric"), values.get("metric_value"), values.get("metric_line")) {
            (Some(metric), Some(value), Some(line)) => Some((
                "nan-before-range-check",
                json!({"metric": metric, "metric_value": value, "metric_line": line}),
            )),
            _ => None,
        },
        _ => None,
    };
    chosen
        .and_then(|(id, filled)| match filled {
            Value::Object(filled) => kb.hint(id)?.render(&filled),
            _ => None,
        })
        .into_iter()
        .collect()
}
