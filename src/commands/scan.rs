//! `assertscope scan`: iterates the user's Dataset or DataLoader in their own Python
//! (the embedded `assertscope.scan` module), which gathers the facts of every batch;
//! the checks of `check` judge them here, and the dataset index of each bad sample is
//! reported.
//!
//! The Python side writes its facts to a private file, not stdout: the user's code
//! may print anything. The child's stdout is sent to our stderr so that `--json` output
//! stays clean.

use crate::check::checks::{thousands, Finding};
use crate::check::histogram;
use crate::check::render::with_cause_help;
use crate::check::report::from_kb;
use crate::check::scan_facts::{self, BatchItem, FieldInspection, ScanFacts, ScanInspection, ScanPlan};
use crate::check::stats::Example;
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::exit;
use crate::pyembed::Materialized;
use crate::render::style::{ColorChoice, Palette};
use crate::render::text;
use crate::report::{Confidence, Evidence, Location, Report, Secondary};
use anyhow::Context;
use serde_json::{json, Map};
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

pub fn execute(args: ScanArgs) -> anyhow::Result<u8> {
    args.labels.validate()?;
    let plan = ScanPlan::new(&args.labels);
    let facts = match gather(&args, &plan)? {
        Gathered::Facts(facts) => facts,
        // Stopped by a signal: the Python child has ended too; nothing more to say.
        Gathered::Stopped(signal) => return Ok(128u8.saturating_add(signal as u8)),
    };
    if let Some(failure) = &facts.error {
        if let Some(tb) = &failure.traceback {
            eprint!("{tb}");
        }
        anyhow::bail!("{}", failure.message);
    }
    let summary = Summary::of(&facts, &args);
    let scanned = scan_facts::inspect(facts, &plan)?;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        crate::render::json::write_report(&mut stdout, &report(&summary, &scanned))?;
    } else {
        let palette = Palette::new(args.color.for_stdout());
        stdout.write_all(human(&summary, &scanned, &palette).as_bytes())?;
    }
    stdout.flush()?;
    let errors = scanned.findings().any(|(_, f)| f.severity == Severity::Error);
    Ok(if errors { exit::PROBLEMS_FOUND } else { exit::OK })
}

/// What the Python child left: its facts, or nothing because a signal stopped the scan.
enum Gathered {
    Facts(ScanFacts),
    Stopped(i32),
}

/// Runs `python -m assertscope.scan` and reads the facts it wrote.
fn gather(args: &ScanArgs, plan: &ScanPlan) -> anyhow::Result<Gathered> {
    let package = Materialized::create()?;
    let out = package.path().join("scan-facts.json");
    let mut cmd = Command::new(&args.python);
    cmd.arg("-m").arg("assertscope.scan").arg(&args.target).arg("--out").arg(&out);
    cmd.arg("--plan").arg(plan.to_json().to_string());
    let optional = [
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
    let (status, stopped) =
        run_to_the_end(cmd).map_err(|e| anyhow::anyhow!("cannot run {python}: {e} (pass --python PATH)"))?;
    if let Some(signal) = stopped {
        return Ok(Gathered::Stopped(signal));
    }
    let text = std::fs::read_to_string(&out).map_err(|_| {
        anyhow::anyhow!(
            "{python} -m assertscope.scan ended ({status}) without writing its facts; is torch installed for {python}?"
        )
    })?;
    let facts = scan_facts::parse(&text).with_context(|| format!("{python} -m assertscope.scan"))?;
    Ok(Gathered::Facts(facts))
}

/// Runs the Python child in a process group of its own, so that the signals of a terminal
/// reach it through this process only, and ends that group (the child and its DataLoader
/// workers) when this process is told to stop (Ctrl-C, `kill`, a closed terminal), as
/// `timeout` does; the child also ends if this process is killed outright. Returns the
/// child's status, and the signal that stopped the scan, if one did.
fn run_to_the_end(mut cmd: Command) -> std::io::Result<(std::process::ExitStatus, Option<i32>)> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    use std::os::unix::process::CommandExt;
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    // SAFETY: setpgid and prctl are async-signal-safe and touch nothing of the parent.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            #[cfg(target_os = "linux")]
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    let group = child.id() as libc::pid_t;
    let handle = signals.handle();
    let stopper = std::thread::spawn(move || {
        let signal = signals.forever().next()?;
        // SAFETY: kill has no memory effects; the group is the child's own.
        unsafe { libc::kill(-group, libc::SIGTERM) };
        Some(signal)
    });
    let status = child.wait();
    handle.close();
    let stopped = stopper.join().unwrap_or(None);
    Ok((status?, stopped))
}

/// Why no labels were checked, when none were: one line, then the items the batches hold.
fn labels_not_checked(summary: &Summary, scanned: &ScanInspection) -> Option<(String, String)> {
    if scanned.labels().is_some() || summary.batches == 0 {
        return None;
    }
    let why = match &summary.label_key {
        Some(key) => {
            format!("no labels checked: the item at --label-key {key} does not hold one label per sample")
        }
        None => "no labels checked: no item of the batches was taken for the labels".to_string(),
    };
    let items: Vec<String> = summary.structure.iter().map(BatchItem::to_string).collect();
    let held = if items.is_empty() { "nothing".to_string() } else { items.join("; ") };
    Some((why, format!("the batches hold: {held}")))
}

/// What was iterated, for the header and the JSON values.
struct Summary {
    target: String,
    kind: Option<String>,
    batch_size: Option<u64>,
    num_workers: Option<u64>,
    dataset_indices: bool,
    batches: u64,
    samples: u64,
    /// The items of the first batch.
    structure: Vec<BatchItem>,
    /// `--label-key`, when given.
    label_key: Option<String>,
}

impl Summary {
    fn of(facts: &ScanFacts, args: &ScanArgs) -> Summary {
        Summary {
            target: facts.target.clone(),
            kind: facts.kind.clone(),
            batch_size: facts.batch_size,
            num_workers: facts.num_workers,
            dataset_indices: facts.indices.as_deref() == Some("dataset"),
            batches: facts.batches.as_ref().map_or(0, |b| b.count),
            samples: facts.batches.as_ref().map_or(0, |b| b.samples),
            structure: facts.structure.clone(),
            label_key: args.label_key.clone(),
        }
    }
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

/// "batch 3, dataset index 17: 7" (with the position inside the sample when it has several values).
fn example_text(summary: &Summary, scanned: &ScanInspection, e: &Example) -> String {
    let which = if summary.dataset_indices { "dataset index" } else { "sample" };
    let batch = scanned.batch_of.get(&e.at.row).map(|b| format!("batch {b}, ")).unwrap_or_default();
    let position = e.at.pos.map(|p| format!(", position {p}")).unwrap_or_default();
    format!("{batch}{which} {}{position}: {}", e.at.row, e.value)
}

/// The finding's message, naming the field it is about.
fn message(field: &FieldInspection, f: &Finding) -> String {
    if f.is_about_batches() {
        return f.message.clone();
    }
    format!("{}: {}", field.name, f.message)
}

/// Findings into the diagnosis contract: errors are diagnoses, warnings and notes secondary.
fn report(summary: &Summary, scanned: &ScanInspection) -> Report {
    let mut report = Report::default();
    for (field, f) in scanned.findings() {
        if f.severity != Severity::Error {
            report.secondary.push(Secondary { cause: f.cause.to_string(), text: message(field, f) });
            continue;
        }
        let mut values = f.values.clone();
        if !f.examples.is_empty() {
            let mut indices: Vec<u64> = Vec::new();
            let mut batches: Vec<u64> = Vec::new();
            for e in &f.examples {
                if !indices.contains(&e.at.row) {
                    indices.push(e.at.row);
                }
                if let Some(&b) = scanned.batch_of.get(&e.at.row) {
                    if !batches.contains(&b) {
                        batches.push(b);
                    }
                }
            }
            values.insert("first_indices".into(), json!(indices));
            values.insert("first_batches".into(), json!(batches));
        }
        values.insert("batches".into(), json!(summary.batches));
        values.insert("samples".into(), json!(summary.samples));
        values.insert("field".into(), json!(field.name));
        let mut evidence =
            vec![Evidence { kind: "finding".into(), text: message(field, f), source_line: None }];
        evidence.extend(f.examples.iter().map(|e| Evidence {
            kind: "sample".into(),
            text: example_text(summary, scanned, e),
            source_line: None,
        }));
        let location = Some(target_location(&summary.target));
        let mut diagnosis = from_kb(f.cause, f.confidence, location, evidence, values);
        if let Some(fix) = &f.fix {
            diagnosis.fix = fix.clone();
        }
        report.diagnoses.push(diagnosis);
    }
    if report.diagnoses.is_empty() {
        let mut values = Map::new();
        values.insert("batches".into(), json!(summary.batches));
        values.insert("samples".into(), json!(summary.samples));
        if let Some(labels) = scanned.labels() {
            let hist = &labels.inspection.stats.hist;
            if let Some(last) = hist.iter().rposition(|&c| c > 0).filter(|&l| l < 1000) {
                values.insert("class_counts".into(), json!(hist[..=last]));
            }
        }
        let unchecked = labels_not_checked(summary, scanned);
        values.insert("labels_checked".into(), json!(unchecked.is_none()));
        if let Some((why, held)) = unchecked {
            report.secondary.push(Secondary { cause: "none".into(), text: format!("{why}; {held}") });
        }
        let location = Some(target_location(&summary.target));
        report.diagnoses.push(from_kb("none", Confidence::High, location, Vec::new(), values));
    }
    report
}

/// One finding: the target, the first bad samples, and for an error the fix.
fn diagnostic(
    summary: &Summary,
    scanned: &ScanInspection,
    field: &FieldInspection,
    f: &Finding,
) -> Diagnostic {
    let mut d = Diagnostic::new(f.severity, Some(f.cause), message(field, f))
        .span(Span::at(summary.target.as_str(), None));
    for e in f.examples.iter().take(SHOWN) {
        d = d.note("", example_text(summary, scanned, e));
    }
    let total = f.values.get("bad_count").and_then(|v| v.as_u64()).unwrap_or(0);
    let shown = f.examples.len().min(SHOWN) as u64;
    if total > shown && shown > 0 {
        d = d.note("", format!("… and {} more", thousands(total - shown)));
    }
    if f.severity == Severity::Error {
        d = with_cause_help(d, crate::kb::KnowledgeBase::get().expect_cause(f.cause), f.fix.as_deref());
    }
    d
}

fn human(summary: &Summary, scanned: &ScanInspection, p: &Palette) -> String {
    let mut out = String::new();
    let mut how = Vec::new();
    if let Some(b) = summary.batch_size {
        how.push(format!("batch size {b}"));
    }
    if let Some(w) = summary.num_workers {
        how.push(format!("{w} worker{}", if w == 1 { "" } else { "s" }));
    }
    let _ = writeln!(
        out,
        "{}{}{} ({}): {} batches, {} samples{}",
        p.bold,
        summary.target,
        p.reset,
        summary.kind.as_deref().unwrap_or("?"),
        thousands(summary.batches),
        thousands(summary.samples),
        if how.is_empty() { String::new() } else { format!(" ({})", how.join(", ")) }
    );
    if let Some(labels) = scanned.labels() {
        let i = &labels.inspection;
        let mut facts = vec![format!("labels {}", labels.name), i.dtype()];
        if let Some((min, max)) = i.stats.int_range() {
            facts.push(format!("min {min}, max {max}"));
        }
        if let Some(b) = &i.bound {
            facts.push(format!("{} {}", b.name, b.value));
        }
        facts.push(format!("task {}", i.task.name()));
        let _ = writeln!(out, "  {}", facts.join("; "));
        if i.stats.int_count() > 0 {
            let bars = histogram::bars(&i.stats, i.bound.as_ref().map(|b| b.value), i.bounds.ignore);
            out.push('\n');
            out.push_str(&histogram::draw(&bars, p));
        }
    }
    let mut findings: Vec<_> = scanned.findings().collect();
    findings.sort_by_key(|(_, f)| std::cmp::Reverse(f.severity));
    for (field, f) in &findings {
        out.push('\n');
        out.push_str(&text::render_one(&diagnostic(summary, scanned, field, f), p.enabled()));
    }
    let unchecked = labels_not_checked(summary, scanned);
    if let Some((why, held)) = &unchecked {
        let warning = Diagnostic::new(Severity::Warning, None, why.clone())
            .span(Span::at(summary.target.as_str(), None))
            .note("", held.clone())
            .help("name the labels with --label-key KEY (a dict key or a tuple position)");
        out.push('\n');
        out.push_str(&text::render_one(&warning, p.enabled()));
    }
    let errors = findings.iter().filter(|(_, f)| f.severity == Severity::Error).count();
    out.push('\n');
    if errors == 0 && unchecked.is_some() {
        let _ = writeln!(out, "{}labels not checked{}: no problem found in what was", p.warning, p.reset);
    } else if errors == 0 {
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
