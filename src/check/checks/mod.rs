//! The checks, one per file. Each reads the merged stats of a run and says, in one line,
//! what is wrong, with the first offending positions and the numbers behind it. Causes
//! and their words come from the knowledge base (`kb/causes.toml`), and so do the hints
//! that follow a finding when the values show a well-known pattern (`kb/hints.toml`).

mod batch_sizes;
mod binary_targets;
mod colour_masks;
mod empty;
mod feature_rows;
mod float_ids;
mod inferred_classes;
mod last_batch;
mod nan_inf;
mod negative;
mod one_based;
mod out_of_range;
mod row_shape;
mod sequence_length;
mod storage_dtype;
mod text_values;
mod unseen_classes;

use super::stats::{Example, Examples, Stats};
use super::{Bound, CheckOptions, Inspection, Role, Task};
use crate::kb::KnowledgeBase;
use crate::report::Confidence;
use serde_json::{json, Map, Value};

/// Error: the data will break training (a diagnosis, and exit status 1). Warning:
/// probably wrong, but valid data can look like this. Note: worth knowing (an inferred
/// bound, a narrow dtype).
pub use crate::diagnostic::Severity;

#[derive(Debug, Clone)]
pub struct Finding {
    /// The check that made it (its file name, with dashes).
    pub check: &'static str,
    /// Taxonomy cause id (`kb/causes.toml`).
    pub cause: &'static str,
    pub severity: Severity,
    pub confidence: Confidence,
    /// One specific line: what was found, with the numbers.
    pub message: String,
    pub examples: Vec<Example>,
    pub values: Map<String, Value>,
    /// The fix when this finding needs another than its cause's: the cause's fix is
    /// written for the error in a training run, and a finding about files may need
    /// its own.
    pub fix: Option<String>,
}

impl Finding {
    fn new(check: &'static str, cause: &'static str, severity: Severity, message: String) -> Finding {
        let confidence = match severity {
            Severity::Error => Confidence::High,
            _ => Confidence::Medium,
        };
        Finding {
            check,
            cause,
            severity,
            confidence,
            message,
            examples: Vec::new(),
            values: Map::new(),
            fix: None,
        }
    }

    fn examples(mut self, ex: &Examples) -> Finding {
        self.examples = ex.first.clone();
        self.values.insert("bad_count".into(), json!(ex.count));
        self
    }

    fn value(mut self, key: &str, value: impl Into<Value>) -> Finding {
        self.values.insert(key.to_string(), value.into());
        self
    }

    fn fix(mut self, text: String) -> Finding {
        self.fix = Some(text);
        self
    }

    fn confidence(mut self, c: Confidence) -> Finding {
        self.confidence = c;
        self
    }

    /// Whether the finding is about the batches as a whole (`scan`), not a field's values.
    pub fn is_about_batches(&self) -> bool {
        matches!(self.check, "batch-sizes" | "last-batch")
    }

    /// Adds a sentence of advice (a hint, or how to tell `check` about it) to the finding's
    /// own fix, which replaces its cause's general one: the message says what was found, the
    /// help line what to do, once.
    fn advise(mut self, sentence: &str) -> Finding {
        self.fix = Some(match self.fix.take() {
            Some(fix) => format!("{fix} {sentence}"),
            None => sentence.to_string(),
        });
        self
    }
}

/// The text of hint `id` of `kb/hints.toml`, its `{name}` placeholders filled from
/// `values` (a JSON object). A test renders every hint the checks use with the values they
/// pass, so a missing id or value is a programming error.
fn hint(id: &str, values: Value) -> String {
    let values = match values {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    KnowledgeBase::get()
        .hint(id)
        .and_then(|h| h.render(&values))
        .unwrap_or_else(|| panic!("hint {id:?} is not in the knowledge base or lacks a value"))
}

/// What every check may look at.
pub struct Context<'a> {
    pub inspection: &'a Inspection,
    pub stats: &'a Stats,
    pub task: Task,
    pub bound: Option<&'a Bound>,
    pub opts: &'a CheckOptions,
}

impl Context<'_> {
    /// The cause of an id past the bound: a class target, or an embedding index.
    fn id_cause(&self) -> &'static str {
        match self.task {
            Task::Tokens => "embedding-index-out-of-range",
            _ => "target-out-of-range",
        }
    }

    /// What the values are, in a message ("labels", "token ids", "mask pixels").
    fn noun(&self) -> &'static str {
        match self.task {
            Task::Tokens => "token ids",
            Task::Segmentation => "mask pixels",
            _ => "labels",
        }
    }

    /// "row has" / "rows have" in a file, "sample has" / "samples have" in batches.
    fn rows_have(&self) -> (&'static str, &'static str) {
        match self.inspection.source {
            super::Source::Files => ("row has", "rows have"),
            super::Source::Batches => ("sample has", "samples have"),
        }
    }

    /// The smallest and largest id, leaving out the ignore index: the loss skips it, so
    /// a void label 255 or a padding -100 is not the range a model must cover.
    fn min_max(&self) -> Option<(i64, i64)> {
        let Some(ignore) = self.inspection.bounds.ignore else { return self.stats.int_range() };
        let s = self.stats;
        let seen = |v: &i64| *v != ignore;
        let mut in_hist = s.hist.iter().enumerate().filter(|(v, &c)| c > 0 && seen(&(*v as i64)));
        let first = in_hist.next().map(|(v, _)| v as i64);
        let last = in_hist.next_back().map(|(v, _)| v as i64).or(first);
        let o = &s.rare.outside;
        let (mut omin, mut omax) = (None, None);
        if o.count > 0 {
            // `distinct` holds every value outside the histogram unless it overflowed;
            // then its min and max stand for the values it could not keep.
            let kept = || o.distinct.keys().copied().filter(seen);
            omin = if o.overflowed && o.min != ignore { Some(o.min) } else { kept().min() };
            omax = if o.overflowed && o.max != ignore { Some(o.max) } else { kept().max() };
        }
        let min = [first, omin].into_iter().flatten().min()?;
        let max = [last, omax].into_iter().flatten().max()?;
        Some((min, max))
    }

    /// Min and max into a finding's values.
    fn with_range(&self, f: Finding) -> Finding {
        match self.min_max() {
            Some((min, max)) => f.value("min", min).value("max", max),
            None => f,
        }
    }
}

type Check = fn(&Context) -> Vec<Finding>;

/// Every check of labels, targets and token ids.
const TARGET_CHECKS: [Check; 17] = [
    empty::check,
    out_of_range::check,
    negative::check,
    binary_targets::check,
    row_shape::check,
    colour_masks::check,
    text_values::check,
    float_ids::check,
    nan_inf::check,
    sequence_length::check,
    feature_rows::check,
    batch_sizes::check,
    last_batch::check,
    one_based::check,
    unseen_classes::check,
    inferred_classes::check,
    storage_dtype::check,
];

/// The checks that apply to any values, model inputs included.
const INPUT_CHECKS: [Check; 4] = [empty::check, nan_inf::check, batch_sizes::check, last_batch::check];

/// Runs every check that applies to the inspected values, errors first.
pub fn run(inspection: &Inspection, opts: &CheckOptions) -> Vec<Finding> {
    let ctx = Context {
        inspection,
        stats: &inspection.stats,
        task: inspection.task,
        bound: inspection.bound.as_ref(),
        opts,
    };
    let checks: &[Check] = match inspection.role {
        Role::Targets => &TARGET_CHECKS,
        Role::Inputs => &INPUT_CHECKS,
    };
    let mut findings: Vec<Finding> = checks.iter().flat_map(|c| c(&ctx)).collect();
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    findings
}

/// "1,234,567"
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// "1 label" / "3 labels"
fn count(n: u64, singular: &str, plural: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { singular } else { plural })
}

/// The first few values of a list, "3, 7, 9, … (12 in all)".
fn some_values(values: &[i64], shown: usize) -> String {
    let mut s = values.iter().take(shown).map(|v| v.to_string()).collect::<Vec<_>>().join(", ");
    if values.len() > shown {
        s.push_str(&format!(", … ({} in all)", values.len()));
    }
    s
}
