//! `assertscope scan`: iterates the user's Dataset or DataLoader in their own Python
//! (the embedded `assertscope.scan` module), checks every batch, and reports the dataset
//! index of each bad sample.
//!
//! The Python side writes its findings to a private file, not stdout: the user's code
//! may print anything. The child's stdout is sent to our stderr so that `--json` output
//! stays clean.

use crate::check::checks::thousands;
use crate::check::histogram::{self, Bar, Flag};
use crate::check::render::with_cause_help;
use crate::check::report::from_kb;
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::exit;
use crate::pyembed::Materialized;
use crate::render::style::{ColorChoice, Palette};
use crate::render::text;
use crate::report::{Confidence, Evidence, Location, Report, Secondary};
use anyhow::Context;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::Write as _;
use std::process::{Command, Stdio};

/// Bad samples shown per finding.
const SHOWN: usize = 5;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  assertscope scan train.py:train_loader --num-classes 10
  assertscope scan mypkg.data:make_dataset --num-classes 100 --batch-size 128 --num-workers 4
  assertscope scan lm.py:loader --vocab-size 50257 --max-positions 1024 --json

Exit status: 0 clean, 1 problems found, 2 the target could not be loaded or iterated.")]
pub struct ScanArgs {
    /// path/to/file.py:name or package.module:name of a Dataset, a DataLoader, or a
    /// zero-argument function returning one
    #[arg(value_name = "TARGET")]
    pub target: String,
    #[command(flatten)]
    pub labels: crate::check::LabelArgs,
    /// Dict key or tuple position of the labels in a batch [default: labels/label/target/y, or position 1]
    #[arg(long, value_name = "KEY")]
    pub label_key: Option<String>,
    /// Dict key or tuple position of the inputs in a batch [default: input_ids/pixel_values/x..., or position 0]
    #[arg(long, value_name = "KEY")]
    pub input_key: Option<String>,
    /// Batch size when the target is a Dataset
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub batch_size: u64,
    /// DataLoader workers when the target is a Dataset
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub num_workers: u64,
    /// Stop after this many batches
    #[arg(long, value_name = "N")]
    pub max_batches: Option<u64>,
    /// module:name of the model (or a function returning it): a last batch of one sample
    /// is an error when it uses BatchNorm
    #[arg(long, value_name = "TARGET")]
    pub model: Option<String>,
    /// The Python interpreter that has your torch
    #[arg(long, value_name = "PATH", default_value = "python")]
    pub python: OsString,
    /// Print one assertscope.diagnosis/1 JSON object
    #[arg(long)]
    pub json: bool,
    /// No progress line (it is shown only while stderr is a terminal)
    #[arg(long)]
    pub no_progress: bool,
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// What `python -m assertscope.scan` writes.
#[derive(Debug, Deserialize)]
pub struct ScanResult {
    /// [`crate::contract::SCAN_RESULT_VERSION`]: a copy of the package from another
    /// release writes another.
    pub version: u64,
    pub target: String,
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub batches: u64,
    #[serde(default)]
    pub samples: u64,
    #[serde(default)]
    pub batch_size: Option<u64>,
    #[serde(default)]
    pub num_workers: Option<u64>,
    /// `dataset` when indices are dataset indices, `iteration` for iterable datasets.
    #[serde(default)]
    pub indices: Option<String>,
    #[serde(default)]
    pub label: Option<LabelSummary>,
    pub findings: Vec<ScanFinding>,
    pub error: Option<ScanFailure>,
}

#[derive(Debug, Deserialize)]
pub struct LabelSummary {
    pub name: Option<String>,
    pub dtype: Option<String>,
    pub min: Option<i64>,
    pub max: Option<i64>,
    pub class_counts: Option<Vec<u64>>,
    /// Labels outside the class histogram (negative ids, the ignore index) and their
    /// counts, so that the histogram's percentages are of every label.
    #[serde(default)]
    pub other_counts: Vec<(i64, u64)>,
    #[serde(default)]
    pub ignore_index: Option<i64>,
}

#[derive(Debug, Deserialize)]
pub struct ScanFinding {
    pub cause: String,
    pub severity: Severity,
    pub message: String,
    pub count: u64,
    pub batches: Vec<u64>,
    pub examples: Vec<ScanExample>,
    #[serde(default)]
    pub values: Map<String, Value>,
}

#[derive(Debug, Deserialize)]
pub struct ScanExample {
    pub batch: u64,
    pub index: Value,
    pub value: Value,
}

#[derive(Debug, Deserialize)]
pub struct ScanFailure {
    pub message: String,
    #[serde(default)]
    pub traceback: Option<String>,
}

pub fn execute(args: ScanArgs) -> anyhow::Result<u8> {
    args.labels.validate()?;
    let package = Materialized::create()?;
    let out = package.path().join("scan-findings.json");
    let mut cmd = Command::new(&args.python);
    cmd.arg("-m").arg("assertscope.scan").arg(&args.target).arg("--out").arg(&out);
    let optional = [
        ("--num-classes", args.labels.num_classes.map(|v| v.to_string())),
        ("--vocab-size", args.labels.vocab_size.map(|v| v.to_string())),
        ("--max-positions", args.labels.max_positions.map(|v| v.to_string())),
        ("--ignore-index", args.labels.ignore_index.map(|v| v.to_string())),
        ("--task", args.labels.task.map(|t| t.name().to_string())),
        ("--label-key", args.label_key.clone()),
        ("--input-key", args.input_key.clone()),
        ("--batch-size", Some(args.batch_size.to_string())),
        ("--num-workers", Some(args.num_workers.to_string())),
        ("--max-batches", args.max_batches.map(|v| v.to_string())),
        ("--model", args.model.clone()),
    ];
    for (flag, value) in optional {
        if let Some(v) = value {
            cmd.arg(flag).arg(v);
        }
    }
    if args.no_progress {
        cmd.arg("--no-progress");
    }
    cmd.env("PYTHONPATH", package.pythonpath());
    // The user's prints go to our stderr, so our stdout holds only the report.
    let stderr_copy = std::io::stderr().as_fd_stdio().context("duplicating stderr for the Python child")?;
    cmd.stdin(Stdio::null()).stdout(stderr_copy);
    let python = args.python.to_string_lossy().into_owned();
    let status =
        cmd.status().map_err(|e| anyhow::anyhow!("cannot run {python}: {e} (pass --python PATH)"))?;
    let text = std::fs::read_to_string(&out).map_err(|_| {
        anyhow::anyhow!(
            "{python} -m assertscope.scan ended ({status}) without writing its findings; is torch installed for {python}?"
        )
    })?;
    let result: ScanResult =
        serde_json::from_str(&text).context("reading the findings of assertscope.scan")?;
    anyhow::ensure!(
        result.version == crate::contract::SCAN_RESULT_VERSION,
        "{python} -m assertscope.scan wrote findings of version {}, this assertscope reads version {}",
        result.version,
        crate::contract::SCAN_RESULT_VERSION
    );
    if let Some(failure) = &result.error {
        if let Some(tb) = &failure.traceback {
            eprint!("{tb}");
        }
        anyhow::bail!("{}", failure.message);
    }
    let mut stdout = std::io::stdout().lock();
    if args.json {
        crate::render::json::write_report(&mut stdout, &report(&result))?;
    } else {
        let palette = Palette::new(args.color.for_stdout());
        stdout.write_all(human(&result, &args, &palette).as_bytes())?;
    }
    stdout.flush()?;
    let errors = result.findings.iter().any(|f| f.severity == Severity::Error);
    Ok(if errors { exit::PROBLEMS_FOUND } else { exit::OK })
}

/// A `Stdio` writing to a duplicate of our stderr.
trait AsFdStdio {
    fn as_fd_stdio(&self) -> std::io::Result<Stdio>;
}

impl AsFdStdio for std::io::Stderr {
    fn as_fd_stdio(&self) -> std::io::Result<Stdio> {
        use std::os::fd::AsFd;
        Ok(Stdio::from(self.as_fd().try_clone_to_owned()?))
    }
}

fn target_location(target: &str) -> Location {
    let (file, name) = target.rsplit_once(':').unwrap_or((target, ""));
    Location {
        file: file.to_string(),
        line: None,
        function: (!name.is_empty()).then(|| name.to_string()),
        code: None,
    }
}

fn example_text(result: &ScanResult, e: &ScanExample) -> String {
    let which = match result.indices.as_deref() {
        Some("dataset") => "dataset index",
        _ => "sample",
    };
    format!("batch {}, {which} {}: {}", e.batch, plain(&e.index), plain(&e.value))
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Findings into the diagnosis contract: errors are diagnoses, warnings secondary.
pub fn report(result: &ScanResult) -> Report {
    let mut report = Report::default();
    for f in &result.findings {
        let Some(cause) = crate::kb::KnowledgeBase::get().cause(&f.cause) else { continue };
        if f.severity != Severity::Error {
            report.secondary.push(Secondary { cause: f.cause.clone(), text: f.message.clone() });
            continue;
        }
        let mut values = f.values.clone();
        values.insert("bad_count".into(), json!(f.count));
        values.insert("first_batches".into(), json!(f.batches));
        values.insert(
            "first_indices".into(),
            json!(f.examples.iter().map(|e| e.index.clone()).collect::<Vec<_>>()),
        );
        values.insert("batches".into(), json!(result.batches));
        values.insert("samples".into(), json!(result.samples));
        if let Some(label) = &result.label {
            if let (Some(min), Some(max)) = (label.min, label.max) {
                values.insert("min".into(), json!(min));
                values.insert("max".into(), json!(max));
            }
        }
        let mut evidence =
            vec![Evidence { kind: "finding".into(), text: f.message.clone(), source_line: None }];
        evidence.extend(f.examples.iter().map(|e| Evidence {
            kind: "sample".into(),
            text: example_text(result, e),
            source_line: None,
        }));
        let location = Some(target_location(&result.target));
        report.diagnoses.push(from_kb(&cause.id, Confidence::High, location, evidence, values));
    }
    if report.diagnoses.is_empty() {
        let mut values = Map::new();
        values.insert("batches".into(), json!(result.batches));
        values.insert("samples".into(), json!(result.samples));
        if let Some(counts) = result.label.as_ref().and_then(|l| l.class_counts.as_ref()) {
            values.insert("class_counts".into(), json!(counts));
        }
        let location = Some(target_location(&result.target));
        report.diagnoses.push(from_kb("none", Confidence::High, location, Vec::new(), values));
    }
    report
}

/// One finding: the target, the first bad samples, and for an error the fix.
fn diagnostic(result: &ScanResult, f: &ScanFinding) -> Diagnostic {
    let mut d = Diagnostic::new(f.severity, Some(&f.cause), f.message.as_str())
        .span(Span::at(result.target.as_str(), None));
    for e in f.examples.iter().take(SHOWN) {
        d = d.note("", example_text(result, e));
    }
    if f.count > f.examples.len().min(SHOWN) as u64 && !f.examples.is_empty() {
        d = d.note("", format!("… {} bad samples in all", thousands(f.count)));
    }
    match crate::kb::KnowledgeBase::get().cause(&f.cause) {
        Some(cause) if f.severity == Severity::Error => with_cause_help(d, cause, None),
        _ => d,
    }
}

fn human(result: &ScanResult, args: &ScanArgs, p: &Palette) -> String {
    let mut out = String::new();
    let mut how = Vec::new();
    if let Some(b) = result.batch_size {
        how.push(format!("batch size {b}"));
    }
    if let Some(w) = result.num_workers {
        how.push(format!("{w} worker{}", if w == 1 { "" } else { "s" }));
    }
    let _ = writeln!(
        out,
        "{}{}{} ({}): {} batches, {} samples{}",
        p.bold,
        result.target,
        p.reset,
        result.kind.as_deref().unwrap_or("?"),
        thousands(result.batches),
        thousands(result.samples),
        if how.is_empty() { String::new() } else { format!(" ({})", how.join(", ")) }
    );
    if let Some(label) = &result.label {
        let mut facts = Vec::new();
        if let Some(n) = &label.name {
            facts.push(format!("labels {n}"));
        }
        if let Some(d) = &label.dtype {
            facts.push(d.clone());
        }
        if let (Some(min), Some(max)) = (label.min, label.max) {
            facts.push(format!("min {min}, max {max}"));
        }
        if let Some(c) = args.labels.num_classes {
            facts.push(format!("num_classes {c}"));
        }
        if !facts.is_empty() {
            let _ = writeln!(out, "  {}", facts.join("; "));
        }
        if let Some(counts) = label.class_counts.as_ref().filter(|c| !c.is_empty() && c.len() <= 64) {
            let flag = |v: i64| {
                if Some(v) == label.ignore_index {
                    Flag::Ignored
                } else if v < 0 || args.labels.num_classes.is_some_and(|n| v >= n) {
                    Flag::OutOfRange
                } else {
                    Flag::Valid
                }
            };
            let classes = counts.iter().enumerate().map(|(i, &c)| (i as i64, c));
            let bars: Vec<Bar> = classes
                .chain(label.other_counts.iter().copied())
                .map(|(v, count)| Bar { label: v.to_string(), count, flag: flag(v) })
                .collect();
            out.push('\n');
            out.push_str(&histogram::draw(&bars, p));
        }
    }
    for f in &result.findings {
        out.push('\n');
        out.push_str(&text::render_one(&diagnostic(result, f), p.enabled()));
    }
    let errors = result.findings.iter().filter(|f| f.severity == Severity::Error).count();
    out.push('\n');
    if errors == 0 {
        let _ = writeln!(out, "{}ok{}: every batch passed", p.help, p.reset);
    } else {
        let _ = writeln!(
            out,
            "{}{errors} problem{} found{}",
            p.error,
            if errors == 1 { "" } else { "s" },
            p.reset
        );
    }
    out
}
