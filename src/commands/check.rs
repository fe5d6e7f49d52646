//! `assertscope check`: validates label/target data files (CSV/TSV, text, JSON Lines,
//! Parquet, Arrow/Hugging Face cache files, NPY/NPZ, safetensors, PNG masks) against the
//! number of classes, the vocabulary and the maximum sequence length.

use crate::check::input::Format;
use crate::check::read::{Header, ReadOptions};
use crate::check::{self, CheckOptions, LabelArgs};
use crate::exit;
use crate::render::style::{ColorChoice, Palette};
use std::io::Write;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  assertscope check labels.csv --column label --num-classes 10
  assertscope check 'shards/*.parquet' --column input_ids --vocab-size 50257 --max-positions 1024
  assertscope check y_train.npy --num-classes 100 --json
  assertscope check masks/ --task segmentation --num-classes 21 --ignore-index 255

Exit status: 0 clean, 1 problems found, 2 unreadable input or bad usage.")]
// One column is judged against one bound: class ids or token ids (`scan`, which checks
// labels and token ids of one batch, takes both).
#[command(mut_arg("num_classes", |a| a.conflicts_with("vocab_size")))]
pub struct CheckArgs {
    /// Data files, directories of shards, or globs (quote them)
    #[arg(required = true, value_name = "FILE")]
    pub inputs: Vec<std::path::PathBuf>,
    /// Column name or 0-based index; a.b for nested JSON/struct fields; NPZ member or tensor name
    #[arg(short, long)]
    pub column: Option<String>,
    #[command(flatten)]
    pub labels: LabelArgs,
    /// A features file whose number of rows must match the labels'
    #[arg(long, value_name = "FILE")]
    pub features: Option<std::path::PathBuf>,
    /// Read every input as this format instead of guessing from the extension
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// Field delimiter for CSV-like files (one character; \t for tab)
    #[arg(long, value_name = "CHAR")]
    pub delimiter: Option<String>,
    /// The first line is a header
    #[arg(long, conflicts_with = "no_header")]
    pub header: bool,
    /// The first line is data, not a header
    #[arg(long)]
    pub no_header: bool,
    /// Print one assertscope.diagnosis/1 JSON object
    #[arg(long)]
    pub json: bool,
    /// Threads to read with [default: all cores]
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// No progress line (it is shown only while stderr is a terminal)
    #[arg(long)]
    pub no_progress: bool,
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// `--format`'s values, named and described by the data readers (which parse no arguments).
#[derive(Debug, Clone, Copy)]
pub struct FormatArg(pub Format);

impl clap::ValueEnum for FormatArg {
    fn value_variants<'a>() -> &'a [Self] {
        const ALL: [FormatArg; Format::ALL.len()] = {
            let mut all = [FormatArg(Format::Csv); Format::ALL.len()];
            let mut i = 0;
            while i < all.len() {
                all[i] = FormatArg(Format::ALL[i]);
                i += 1;
            }
            all
        };
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let value = clap::builder::PossibleValue::new(self.0.name_on_command_line());
        Some(match self.0.description() {
            Some(help) => value.help(help),
            None => value,
        })
    }
}

pub fn execute(args: CheckArgs) -> anyhow::Result<u8> {
    if let Some(n) = args.threads {
        // Only fails when a pool already exists, which then serves just as well.
        let _ = rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build_global();
    }
    let opts = options(&args)?;
    let inspection = check::inspect(&opts)?;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        crate::render::json::write_report(&mut stdout, &check::report::build(&inspection))?;
    } else {
        let palette = Palette::new(args.color.for_stdout());
        stdout.write_all(check::render::human(&inspection, &palette).as_bytes())?;
    }
    stdout.flush()?;
    Ok(if inspection.has_errors() { exit::PROBLEMS_FOUND } else { exit::OK })
}

fn options(args: &CheckArgs) -> anyhow::Result<CheckOptions> {
    args.labels.validate()?;
    let delimiter = match args.delimiter.as_deref() {
        None => None,
        Some("\\t" | "tab" | "\t") => Some(b'\t'),
        Some(d) if d.len() == 1 => Some(d.as_bytes()[0]),
        Some(d) => anyhow::bail!("--delimiter must be one character, not {d:?}"),
    };
    let header = if args.header {
        Header::Yes
    } else if args.no_header {
        Header::No
    } else {
        Header::Auto
    };
    Ok(CheckOptions {
        inputs: args.inputs.clone(),
        format: args.format.map(|FormatArg(format)| format),
        read: ReadOptions { column: args.column.clone(), header, delimiter, parallelism: 1 },
        num_classes: args.labels.num_classes,
        vocab_size: args.labels.vocab_size,
        max_positions: args.labels.max_positions,
        ignore_index: args.labels.ignore_index,
        task: args.labels.task,
        features: args.features.clone(),
        progress: !args.no_progress,
    })
}
