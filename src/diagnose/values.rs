//! Values a diagnosis reports beyond the error message itself, and the hints they
//! trigger.

use crate::kb::KnowledgeBase;
use crate::log::LogScan;
use crate::report::Evidence;
use serde_json::{Map, Value};

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
        let stated = scan.sizes.iter().filter(|s| s.key == *key && s.log_line <= before_line.max(1)).last();
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
    // The number of classes bounds a class target.
    if cause == "target-out-of-range" && !values.contains_key("bound") {
        if let Some(n) = values.get("num_classes").or_else(|| values.get("num_labels")).cloned() {
            values.insert("bound".into(), n);
        }
    }
    if cause == "embedding-index-out-of-range" && !values.contains_key("bound") {
        if let Some(n) = values.get("num_embeddings").or_else(|| values.get("vocab_size")).cloned() {
            values.insert("bound".into(), n);
        }
    }
}

/// Hints from kb/hints.toml whose pattern the values show.
pub fn hints(kb: &KnowledgeBase, cause: &str, values: &Map<String, Value>) -> Vec<String> {
    let int = |k: &str| values.get(k).and_then(Value::as_i64);
    let mut ids: Vec<&str> = Vec::new();
    match cause {
        "target-out-of-range" => match (int("value"), int("bound")) {
            (Some(255), _) => ids.push("void-label-255"),
            (Some(v), Some(b)) if v == b => ids.push("one-based-labels"),
            (Some(v), _) if v < 0 && v != -100 => ids.push("padding-label"),
            _ => {}
        },
        "embedding-index-out-of-range" => {
            if int("value").is_some() && int("bound").is_some() {
                ids.push("tokens-added-without-resize");
            }
        }
        "nan-inf" => {
            if values.contains_key("metric") {
                ids.push("nan-before-range-check");
            }
        }
        _ => {}
    }
    ids.iter().filter_map(|id| kb.hint(id)?.render(values)).collect()
}
