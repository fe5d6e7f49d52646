//! `assertscope check`: validates label and target data at rest against the number of
//! classes, the vocabulary and the maximum sequence length, before any of it reaches a
//! loss or an embedding on the GPU.
//!
//! Pipeline: [`input`] resolves paths, globs and directories; [`read`] plans each file
//! into units that threads read into [`stats::Stats`] (merged in order); [`checks`] turns
//! the merged stats into findings; [`report`] and [`render`] print them. `scan` reads the
//! fields of a DataLoader's batches into the same stats ([`scan_facts`]), so the same
//! checks judge them.

pub mod checks;
pub mod histogram;
pub mod render;
pub mod report;
pub mod scan_facts;
pub mod scan_report;
pub mod site;

pub use assertscope_labels::{input, read, stats};

use anyhow::Context as _;
use input::{Format, InputFile};
use rayon::prelude::*;
use read::{ColumnInfo, FilePlan, Layout, NeedsSequential, ReadCtx, ReadOptions, Unit};
use stats::{Bounds, Stats};

/// What the labels are for; decides which values are valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Task {
    /// One class index per row, for cross_entropy / nll_loss
    Classification,
    /// 0/1 targets, for BCE losses
    Binary,
    /// Multi-hot rows, or lists of class indices
    Multilabel,
    /// Per-pixel class indices (masks)
    Segmentation,
    /// Token ids for an embedding
    Tokens,
}

impl Task {
    pub fn name(self) -> &'static str {
        match self {
            Task::Classification => "classification",
            Task::Binary => "binary",
            Task::Multilabel => "multilabel",
            Task::Segmentation => "segmentation",
            Task::Tokens => "tokens",
        }
    }
}

/// The bounds and the task, as `check` and `scan` take them on the command line.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LabelArgs {
    /// Number of classes: valid labels are 0..N-1
    #[arg(long, value_name = "N")]
    pub num_classes: Option<i64>,
    /// Vocabulary (embedding table) size: valid token ids are 0..V-1
    #[arg(long, value_name = "V")]
    pub vocab_size: Option<i64>,
    /// Longest allowed sequence (rows of list columns or 2-D arrays, integer inputs)
    #[arg(long, value_name = "N")]
    pub max_positions: Option<u64>,
    /// A value the loss skips (ignore_index), e.g. -100 or 255
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub ignore_index: Option<i64>,
    /// What the labels are for [default: tokens with --vocab-size, segmentation for PNG masks, else classification]
    #[arg(long, value_enum)]
    pub task: Option<Task>,
}

impl LabelArgs {
    /// Fails on bounds that cannot be right.
    pub fn validate(&self) -> anyhow::Result<()> {
        for (flag, v) in [("--num-classes", self.num_classes), ("--vocab-size", self.vocab_size)] {
            if v.is_some_and(|v| v <= 0) {
                anyhow::bail!("{flag} must be a positive number");
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    pub inputs: Vec<std::path::PathBuf>,
    pub format: Option<Format>,
    pub read: ReadOptions,
    pub num_classes: Option<i64>,
    pub vocab_size: Option<i64>,
    pub max_positions: Option<u64>,
    pub ignore_index: Option<i64>,
    pub task: Option<Task>,
    pub features: Option<std::path::PathBuf>,
    /// Show a progress line on stderr when it is a terminal.
    pub progress: bool,
}

/// The exclusive upper bound the values are checked against, and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    pub value: i64,
    /// `num_classes`, `vocab_size`, or how the bound was derived.
    pub name: String,
}

#[derive(Debug, Clone)]
pub struct FeatureRows {
    pub file: String,
    pub rows: u64,
}

/// Where the values were read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Data at rest (`check`): the dataset code may still convert them.
    Files,
    /// The batches a DataLoader yields (`scan`): what reaches the loss as it is.
    Batches,
}

/// What a column or field holds, which decides the checks that apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Labels, targets or token ids: every check.
    Targets,
    /// Model inputs (features, pixels): only emptiness and NaN/inf can be judged.
    Inputs,
}

/// Everything a check run learned.
pub struct Inspection {
    pub files: Vec<InputFile>,
    pub column: ColumnInfo,
    pub task: Task,
    pub bound: Option<Bound>,
    pub bounds: Bounds,
    pub stats: Stats,
    pub features: Option<FeatureRows>,
    pub source: Source,
    pub role: Role,
    /// The batch structure `scan` saw (sizes, BatchNorm); carried by one field only.
    pub batches: Option<scan_facts::BatchFacts>,
    pub findings: Vec<checks::Finding>,
}

impl Inspection {
    /// The stored type, or for text formats the type the values have.
    pub fn dtype(&self) -> String {
        if !self.column.dtype.is_empty() {
            return self.column.dtype.clone();
        }
        let r = &self.stats.rare;
        let scalar = if r.text.count > 0 {
            "text"
        } else if r.whole_floats + r.non_integer.count + r.nan_inf.count > 0 {
            "float"
        } else {
            "int"
        };
        match self.column.layout {
            Layout::Rows(_) => format!("list<{scalar}>"),
            _ => scalar.to_string(),
        }
    }

    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.severity == checks::Severity::Error)
    }
}

/// Reads every input and runs every check.
pub fn inspect(opts: &CheckOptions) -> anyhow::Result<Inspection> {
    let files = input::resolve(&opts.inputs, opts.format)?;
    let read_opts = ReadOptions { parallelism: rayon::current_num_threads(), ..opts.read.clone() };
    let plans: Vec<FilePlan> =
        files.par_iter().map(|f| read::plan(f, &read_opts)).collect::<anyhow::Result<_>>()?;
    let column = plans[0].column.clone();
    let task = opts.task.unwrap_or(if opts.vocab_size.is_some() {
        Task::Tokens
    } else if files.iter().all(|f| f.format == Format::Png) {
        Task::Segmentation
    } else {
        Task::Classification
    });
    let (bound, bounds) = bounds(opts, task, &column);
    let ctx = ReadCtx { bounds: &bounds, opts: &read_opts, progress: None };
    let sizes = files.iter().map(|f| std::fs::metadata(&f.path).map_or(0, |m| m.len())).collect();
    let progress = crate::progress::Progress::new("check", sizes, opts.progress);
    let stats = read_all(&plans, &ctx, &progress)?;
    progress.finish();
    let features = match &opts.features {
        Some(path) => Some(count_features(path, opts)?),
        None => None,
    };
    let mut inspection = Inspection {
        files,
        column,
        task,
        bound,
        bounds,
        stats,
        features,
        source: Source::Files,
        role: Role::Targets,
        batches: None,
        findings: Vec::new(),
    };
    inspection.findings = checks::run(&inspection, opts);
    Ok(inspection)
}

/// The bound findings name (`num_classes 10`) and the bounds a reader sorts values by,
/// fixed before any value is read: the same for a file (`check`) and a field of the
/// batches (`scan`).
pub fn bounds(opts: &CheckOptions, task: Task, column: &ColumnInfo) -> (Option<Bound>, Bounds) {
    let bound = bound(opts, task, column);
    let value_bound = match (task, column.layout) {
        // 0/1 targets: anything from 2 up is out of range, like a class id past C.
        (Task::Binary, _) | (Task::Multilabel, Layout::Rows(Some(_))) => Some(2),
        _ => bound.as_ref().map(|b| b.value),
    };
    let bounds = Bounds {
        upper: value_bound,
        ignore: opts.ignore_index,
        max_positions: opts.max_positions,
        row_patterns: matches!(task, Task::Classification | Task::Binary | Task::Multilabel),
    };
    (bound, bounds)
}

fn bound(opts: &CheckOptions, task: Task, column: &ColumnInfo) -> Option<Bound> {
    let named = |value: i64, name: &str| Some(Bound { value, name: name.to_string() });
    match task {
        Task::Tokens => opts
            .vocab_size
            .and_then(|v| named(v, "vocab_size"))
            .or_else(|| opts.num_classes.and_then(|v| named(v, "num_classes"))),
        Task::Binary => named(2, "2 (binary)"),
        _ => opts.num_classes.and_then(|v| named(v, "num_classes")).or_else(|| {
            column.declared_classes.and_then(|v| named(v, "num_classes (from the ClassLabel feature)"))
        }),
    }
}

/// Reads all units in parallel and merges their stats in input order. A file whose
/// parallel units gave up is read again by its sequential unit.
fn read_all(
    plans: &[FilePlan],
    ctx: &ReadCtx,
    progress: &crate::progress::Progress,
) -> anyhow::Result<Stats> {
    let mut sequential = vec![false; plans.len()];
    loop {
        let units: Vec<(u32, &dyn Unit)> = plans
            .iter()
            .enumerate()
            .flat_map(|(i, p)| {
                let units: Vec<&dyn Unit> = match (&p.sequential, sequential[i]) {
                    (Some(s), true) => vec![s.as_ref()],
                    _ => p.units.iter().map(|u| u.as_ref()).collect(),
                };
                units.into_iter().map(move |u| (i as u32, u))
            })
            .collect();
        progress.plan(units.iter().map(|&(file, _)| file));
        let retry = std::sync::Mutex::new(Vec::new());
        let stats = units
            .par_iter()
            .map(|&(file, unit)| {
                let mut s = Stats::new(ctx.bounds, file);
                // The bytes the unit reports as it reads, up to its share of the file; the
                // rest of its share when it ends.
                let share = progress.unit_bytes(file);
                let reported = std::sync::atomic::AtomicU64::new(0);
                let report = |bytes: u64| {
                    let before = reported.fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
                    progress.bytes_read(bytes.min(share.saturating_sub(before)));
                };
                let unit_ctx = ReadCtx { bounds: ctx.bounds, opts: ctx.opts, progress: Some(&report) };
                match unit.read(&unit_ctx, &mut s) {
                    Ok(end) => {
                        let read = reported.load(std::sync::atomic::Ordering::Relaxed);
                        progress.unit_read(file, read.min(share));
                        s.finish_unit(end.rows, end.lines)
                    }
                    Err(e) if e.is::<NeedsSequential>() => {
                        retry.lock().expect("no panics while holding the lock").push(file as usize);
                        s.finish_unit(0, 0);
                    }
                    Err(e) => return Err(e),
                }
                Ok(s)
            })
            .try_reduce(
                || Stats::new(ctx.bounds, u32::MAX),
                |mut a, b| {
                    a.merge(b);
                    Ok(a)
                },
            )?;
        let retry = retry.into_inner().expect("no panics while holding the lock");
        if retry.is_empty() {
            return Ok(stats);
        }
        let mut progressed = false;
        for file in retry {
            progressed |= !std::mem::replace(&mut sequential[file], true);
        }
        anyhow::ensure!(progressed, "a file could not be read even sequentially");
    }
}

fn count_features(path: &std::path::Path, opts: &CheckOptions) -> anyhow::Result<FeatureRows> {
    let files = input::resolve(&[path.to_path_buf()], None).context("--features")?;
    let read_opts = ReadOptions { column: None, header: opts.read.header, delimiter: None, parallelism: 1 };
    let mut rows = 0u64;
    for f in &files {
        rows += read::count_rows(f, &read_opts)?;
    }
    Ok(FeatureRows { file: path.display().to_string(), rows })
}
