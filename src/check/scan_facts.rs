//! The facts `python -m assertscope.scan` gathers from a user's batches, read back as
//! check's own [`Stats`], so that the checks of [`super::checks`] judge a field of the
//! batches exactly as they judge a column of a file.
//!
//! The Python side is a reader like the ones in [`super::read`]: the binary fixes the
//! bounds first ([`ScanPlan`]), the reader sorts every value by them (dense histogram,
//! ignore index, negative, past the bound, non-integer, NaN/inf, text, row lengths and
//! one-hot / multi-hot rows) and keeps counts and the first positions. A position's row
//! is the sample's dataset index. Nothing in the document is a verdict.

use super::read::{ColumnInfo, Layout};
use super::stats::{Bounds, Example, Examples, FileRows, Outside, Pos, Sample, Stats};
use super::{bounds, checks, Bound, CheckOptions, Inspection, LabelArgs, Role, Source, Task};
use anyhow::{bail, Context as _};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The ignore index of cross_entropy and nll_loss when none is given: labels of padding
/// positions (-100) are skipped by the loss, so `scan` does not count them as bad.
const LOSS_IGNORE_INDEX: i64 = -100;

/// How the values of each role are judged: fixed before the Python side reads a batch.
pub struct ScanPlan {
    pub labels: RolePlan,
    /// The integer input holding token ids, when a vocabulary size is given.
    pub tokens: Option<RolePlan>,
    pub inputs: RolePlan,
}

pub struct RolePlan {
    pub task: Task,
    pub role: Role,
    pub bound: Option<Bound>,
    pub bounds: Bounds,
    pub opts: CheckOptions,
}

impl RolePlan {
    fn new(task: Task, role: Role, opts: CheckOptions) -> RolePlan {
        // Batches of multilabel targets are multi-hot rows, whose valid values are 0 and 1.
        let layout = if task == Task::Multilabel { Layout::Rows(Some(0)) } else { Layout::Scalar };
        let (bound, bounds) = bounds(&opts, task, &ColumnInfo::new(None, "", layout));
        RolePlan { task, role, bound, bounds, opts }
    }

    fn to_json(&self) -> Value {
        let b = &self.bounds;
        json!({
            "hist_len": b.hist_len(),
            "upper": b.upper,
            "ignore": b.ignore,
            "max_positions": b.max_positions,
            "row_patterns": b.row_patterns,
            // Inputs are judged only for NaN/inf and emptiness: no need to tell whole
            // floats from the rest.
            "sort_floats": self.role == Role::Targets,
        })
    }
}

impl ScanPlan {
    /// Labels are class ids (token ids with only `--vocab-size`), judged with the loss's
    /// default ignore index; the first integer input is token ids when `--vocab-size` is
    /// given; other inputs only for emptiness and NaN/inf.
    pub fn new(args: &LabelArgs) -> ScanPlan {
        let task = args.task.unwrap_or(if args.vocab_size.is_some() && args.num_classes.is_none() {
            Task::Tokens
        } else {
            Task::Classification
        });
        let ignore = match task {
            Task::Binary | Task::Multilabel => args.ignore_index,
            _ => Some(args.ignore_index.unwrap_or(LOSS_IGNORE_INDEX)),
        };
        let labels = CheckOptions {
            num_classes: args.num_classes,
            vocab_size: if task == Task::Tokens { args.vocab_size } else { None },
            ignore_index: ignore,
            task: Some(task),
            ..CheckOptions::default()
        };
        let tokens = args.vocab_size.map(|v| CheckOptions {
            vocab_size: Some(v),
            max_positions: args.max_positions,
            task: Some(Task::Tokens),
            ..CheckOptions::default()
        });
        ScanPlan {
            labels: RolePlan::new(task, Role::Targets, labels),
            tokens: tokens.map(|t| RolePlan::new(Task::Tokens, Role::Targets, t)),
            inputs: RolePlan::new(Task::Classification, Role::Inputs, CheckOptions::default()),
        }
    }

    /// The `--plan` argument of `python -m assertscope.scan`.
    pub fn to_json(&self) -> Value {
        let mut plan = json!({"labels": self.labels.to_json(), "inputs": self.inputs.to_json()});
        if let Some(t) = &self.tokens {
            plan["tokens"] = t.to_json();
        }
        plan
    }

    fn role(&self, name: &str) -> Option<&RolePlan> {
        match name {
            "labels" => Some(&self.labels),
            "tokens" => self.tokens.as_ref(),
            "inputs" => Some(&self.inputs),
            _ => None,
        }
    }
}

/// What `python -m assertscope.scan` writes.
#[derive(Debug, Deserialize)]
pub struct ScanFacts {
    /// [`crate::contract::SCAN_RESULT_VERSION`]: a copy of the package from another
    /// release writes another.
    pub version: u64,
    pub target: String,
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub batch_size: Option<u64>,
    #[serde(default)]
    pub num_workers: Option<u64>,
    /// `dataset` when indices are dataset indices, `iteration` for iterable datasets.
    #[serde(default)]
    pub indices: Option<String>,
    #[serde(default)]
    pub batches: Option<BatchFacts>,
    #[serde(default)]
    pub fields: Vec<FieldFacts>,
    /// The items of the first batch.
    #[serde(default)]
    pub structure: Vec<BatchItem>,
    pub error: Option<ScanFailure>,
}

/// One item of a batch: a dict value, a tuple position, or the batch itself.
#[derive(Debug, Clone, Deserialize)]
pub struct BatchItem {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub dtype: Option<String>,
    #[serde(default)]
    pub shape: Option<Vec<u64>>,
    /// A list's length, and its first item.
    #[serde(default)]
    pub len: Option<u64>,
    #[serde(default)]
    pub first: Option<Box<BatchItem>>,
}

impl std::fmt::Display for BatchItem {
    /// `batch['input_ids']: int64 tensor [64, 5]`, `batch[1]: list of 8 (first: list of 3)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: ", self.name)?;
        self.describe(f)
    }
}

impl BatchItem {
    fn describe(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(dtype) = &self.dtype {
            write!(f, "{dtype} ")?;
        }
        f.write_str(&self.kind)?;
        if let Some(shape) = &self.shape {
            let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
            write!(f, " [{}]", dims.join(", "))?;
        }
        if let Some(len) = self.len {
            write!(f, " of {len}")?;
        }
        if let Some(first) = &self.first {
            f.write_str(" (first: ")?;
            first.describe(f)?;
            f.write_str(")")?;
        }
        Ok(())
    }
}

#[derive(Debug, Deserialize)]
pub struct ScanFailure {
    pub message: String,
    #[serde(default)]
    pub traceback: Option<String>,
}

/// Sizes of the batches, and where inputs and labels disagree.
#[derive(Debug, Clone, Deserialize)]
pub struct BatchFacts {
    pub count: u64,
    pub samples: u64,
    pub first_size: Option<u64>,
    pub last_size: Option<u64>,
    /// Whether the model given with `--model` has BatchNorm; none without `--model`.
    pub model_has_batchnorm: Option<bool>,
    pub size_mismatches: Mismatches,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Mismatches {
    pub count: u64,
    pub first: Vec<Mismatch>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Mismatch {
    pub batch: u64,
    pub input: String,
    pub input_samples: u64,
    pub label: String,
    pub label_samples: u64,
}

/// One field of the batches (labels, token ids, an input), as a column of a file.
#[derive(Debug, Deserialize)]
pub struct FieldFacts {
    pub name: String,
    pub role: String,
    pub dtype: Option<String>,
    /// The shape of one sample, from the first batch.
    pub sample_shape: Option<Vec<u64>>,
    pub varying_shape: bool,
    pub samples: u64,
    pub hist: Vec<u64>,
    pub outside: OutsideFacts,
    pub ignored: u64,
    pub negative: ExampleFacts,
    pub over_bound: ExampleFacts,
    pub whole_floats: u64,
    pub finite_floats: u64,
    pub float_min: Option<f64>,
    pub float_max: Option<f64>,
    pub non_integer: ExampleFacts,
    pub nan_inf: ExampleFacts,
    pub text: ExampleFacts,
    pub lengths: LengthFacts,
    pub patterns: PatternFacts,
}

#[derive(Debug, Deserialize)]
pub struct OutsideFacts {
    pub count: u64,
    pub min: Option<i64>,
    pub max: Option<i64>,
    pub distinct: Vec<(i64, u64)>,
    pub overflowed: bool,
}

#[derive(Debug, Deserialize)]
pub struct ExampleFacts {
    pub count: u64,
    pub first: Vec<ExampleFact>,
}

#[derive(Debug, Deserialize)]
pub struct ExampleFact {
    pub batch: u64,
    pub index: u64,
    pub position: Option<u64>,
    pub value: Value,
}

#[derive(Debug, Deserialize)]
pub struct LengthFacts {
    pub rows: u64,
    pub min: Option<u64>,
    pub max: u64,
    pub total: u64,
    pub too_long: ExampleFacts,
    pub empty: ExampleFacts,
}

#[derive(Debug, Deserialize)]
pub struct PatternFacts {
    pub rows: u64,
    pub binary: u64,
    pub zeros: u64,
    pub one_hot: ExampleFacts,
    pub multi_hot: ExampleFacts,
}

/// One field judged: its name and the inspection the checks made of it.
pub struct FieldInspection {
    pub name: String,
    pub inspection: Inspection,
}

/// Everything `scan` learned: each field judged by the checks of `check`, labels first,
/// and the batch of each dataset index an example names.
pub struct ScanInspection {
    pub fields: Vec<FieldInspection>,
    pub batch_of: BTreeMap<u64, u64>,
}

impl ScanInspection {
    pub fn findings(&self) -> impl Iterator<Item = (&FieldInspection, &checks::Finding)> {
        self.fields.iter().flat_map(|f| f.inspection.findings.iter().map(move |x| (f, x)))
    }

    pub fn labels(&self) -> Option<&FieldInspection> {
        self.fields.iter().find(|f| f.inspection.role == Role::Targets)
    }
}

/// Reads the facts document, checks its version, and runs the checks on every field.
pub fn parse(text: &str) -> anyhow::Result<ScanFacts> {
    #[derive(Deserialize)]
    struct Versioned {
        version: Option<u64>,
    }
    let versioned: Versioned = serde_json::from_str(text).context("reading the facts of assertscope.scan")?;
    let expected = crate::contract::SCAN_RESULT_VERSION;
    match versioned.version {
        Some(v) if v == expected => {}
        Some(v) => {
            bail!("assertscope.scan wrote facts of version {v}; this assertscope reads version {expected}")
        }
        None => bail!(
            "assertscope.scan wrote a document without a version; this assertscope reads version {expected}"
        ),
    }
    serde_json::from_str(text).context("reading the facts of assertscope.scan")
}

pub fn inspect(facts: ScanFacts, plan: &ScanPlan) -> anyhow::Result<ScanInspection> {
    let mut batch_of = BTreeMap::new();
    let mut fields: Vec<FieldFacts> = facts.fields;
    // Labels first: they carry the batch structure and lead the report.
    fields.sort_by_key(|f| match f.role.as_str() {
        "labels" => 0,
        "tokens" => 1,
        _ => 2,
    });
    let mut batches = facts.batches;
    let mut judged = Vec::new();
    for field in fields {
        let Some(role) = plan.role(&field.role) else {
            bail!("assertscope.scan wrote a field {} of unknown role {:?}", field.name, field.role)
        };
        let stats = field.stats(&role.bounds, &mut batch_of)?;
        let mut inspection = Inspection {
            // Positions name dataset indices, not files.
            files: Vec::new(),
            column: field.column(),
            task: role.task,
            bound: role.bound.clone(),
            bounds: role.bounds.clone(),
            stats,
            features: None,
            source: Source::Batches,
            role: role.role,
            batches: batches.take(),
            findings: Vec::new(),
        };
        inspection.findings = checks::run(&inspection, &role.opts);
        judged.push(FieldInspection { name: field.name, inspection });
    }
    Ok(ScanInspection { fields: judged, batch_of })
}

impl FieldFacts {
    fn column(&self) -> ColumnInfo {
        let layout = match self.sample_shape.as_deref() {
            None | Some([]) => Layout::Scalar,
            Some([width]) => Layout::Rows((!self.varying_shape).then_some(*width)),
            Some(_) => Layout::Image,
        };
        let mut column =
            ColumnInfo::new(Some(self.name.clone()), self.dtype.clone().unwrap_or_default(), layout);
        // The shape of all the samples stacked, as an array file of them would have.
        column.shape = match &self.sample_shape {
            Some(shape) if !self.varying_shape => Some([&[self.samples][..], shape].concat()),
            _ => None,
        };
        column
    }

    fn stats(&self, bounds: &Bounds, batch_of: &mut BTreeMap<u64, u64>) -> anyhow::Result<Stats> {
        let mut s = Stats::new(bounds, 0);
        let kept = self.hist.len().min(s.hist.len());
        anyhow::ensure!(
            self.hist.len() <= s.hist.len(),
            "assertscope.scan counted {} classes for {}, more than the {} planned",
            self.hist.len(),
            self.name,
            s.hist.len()
        );
        s.hist[..kept].copy_from_slice(&self.hist[..kept]);
        s.files.push(FileRows { file: 0, rows: self.samples, lines: 0 });
        let mut examples = |facts: &ExampleFacts| -> anyhow::Result<Examples> {
            let mut first = Vec::with_capacity(facts.first.len());
            for e in &facts.first {
                batch_of.entry(e.index).or_insert(e.batch);
                first.push(Example {
                    file: 0,
                    at: Pos { row: e.index, line: None, pos: e.position },
                    value: sample(&e.value).with_context(|| {
                        format!("a value of {} in the facts of assertscope.scan", self.name)
                    })?,
                });
            }
            Ok(Examples { count: facts.count, first })
        };
        let r = &mut s.rare;
        r.outside = Outside {
            count: self.outside.count,
            min: self.outside.min.unwrap_or(i64::MAX),
            max: self.outside.max.unwrap_or(i64::MIN),
            distinct: self.outside.distinct.iter().copied().collect(),
            overflowed: self.outside.overflowed,
        };
        r.ignored = self.ignored;
        r.negative = examples(&self.negative)?;
        r.over_bound = examples(&self.over_bound)?;
        r.whole_floats = self.whole_floats;
        r.finite_floats = self.finite_floats;
        r.float_min = self.float_min.unwrap_or(f64::INFINITY);
        r.float_max = self.float_max.unwrap_or(f64::NEG_INFINITY);
        r.non_integer = examples(&self.non_integer)?;
        r.nan_inf = examples(&self.nan_inf)?;
        r.text = examples(&self.text)?;
        let l = &mut s.lengths;
        l.rows = self.lengths.rows;
        l.min = self.lengths.min.unwrap_or(u64::MAX);
        l.max = self.lengths.max;
        l.total = self.lengths.total;
        l.too_long = examples(&self.lengths.too_long)?;
        l.empty = examples(&self.lengths.empty)?;
        let p = &mut s.patterns;
        p.rows = self.patterns.rows;
        p.binary = self.patterns.binary;
        p.zeros = self.patterns.zeros;
        p.one_hot = examples(&self.patterns.one_hot)?;
        p.multi_hot = examples(&self.patterns.multi_hot)?;
        Ok(s)
    }
}

/// A value as the Python side writes it: a number (NaN and infinities as strings), or
/// `{"text": …}`, `{"len": n}`, `{"row": [...]}`.
fn sample(value: &Value) -> anyhow::Result<Sample> {
    let float = |v: &Value| -> Option<f64> {
        match v {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => match s.as_str() {
                "nan" => Some(f64::NAN),
                "inf" => Some(f64::INFINITY),
                "-inf" => Some(f64::NEG_INFINITY),
                _ => None,
            },
            _ => None,
        }
    };
    Ok(match value {
        Value::Null => Sample::Null,
        Value::Number(n) if n.is_i64() => Sample::Int(n.as_i64().unwrap_or_default()),
        Value::Object(o) if o.contains_key("text") => {
            Sample::Text(o["text"].as_str().unwrap_or("").to_string())
        }
        Value::Object(o) if o.contains_key("len") => Sample::Len(o["len"].as_u64().unwrap_or(0)),
        Value::Object(o) if o.contains_key("row") => {
            Sample::Row(o["row"].as_array().map(|r| r.iter().filter_map(float).collect()).unwrap_or_default())
        }
        other => match float(other) {
            Some(v) => Sample::Float(v),
            None => bail!("{other} is not a value"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_back_as_samples() {
        assert_eq!(sample(&json!(7)).unwrap(), Sample::Int(7));
        assert!(matches!(sample(&json!("nan")).unwrap(), Sample::Float(v) if v.is_nan()));
        assert_eq!(sample(&json!({"text": "cat"})).unwrap(), Sample::Text("cat".into()));
        assert_eq!(sample(&json!({"row": [0, 1.0]})).unwrap(), Sample::Row(vec![0.0, 1.0]));
        assert!(sample(&json!("seven")).is_err());
    }

    #[test]
    fn another_version_is_refused_by_name() {
        let err = parse(r#"{"version": 1, "target": "t.py:x", "findings": [], "error": null}"#).unwrap_err();
        let expected =
            format!("version 1; this assertscope reads version {}", crate::contract::SCAN_RESULT_VERSION);
        assert!(err.to_string().contains(&expected), "{err}");
    }
}
