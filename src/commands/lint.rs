//! `assertscope lint PATH…`: static checks of training code (see `crate::lint`).
//!
//! Exit status as with ruff: 0 nothing found (or `--exit-zero`), 1 problems found, 2 a path
//! could not be read or the arguments are wrong.

use crate::exit;
use crate::lint::{output, walk, Selection};
use crate::render::style::{ColorChoice, Palette};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// rustc-style: location, source line, help
    Text,
    /// one JSON object (schema assertscope.lint/1)
    Json,
    /// SARIF 2.1.0, for code-scanning services
    Sarif,
    /// GitHub Actions workflow commands: annotations on the pull request's lines
    Github,
}

#[derive(Debug, clap::Args)]
pub struct LintArgs {
    /// Python files or directories (searched for *.py, honouring .gitignore)
    #[arg(value_name = "PATH", default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// Only these rules: codes or prefixes, comma-separated (AS1, AS101)
    #[arg(long, value_name = "CODE", value_delimiter = ',')]
    pub select: Vec<String>,
    /// Skip these rules: codes or prefixes, comma-separated
    #[arg(long, value_name = "CODE", value_delimiter = ',')]
    pub ignore: Vec<String>,
    /// Output format (`--format` is accepted too)
    #[arg(long = "output-format", visible_alias = "format", value_name = "FORMAT", value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Exit with status 0 even when problems are found (2 still means unreadable input)
    #[arg(long)]
    pub exit_zero: bool,
    /// When to colour text output
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Worker threads (default: one per core)
    #[arg(long, short = 'j', value_name = "N")]
    pub threads: Option<usize>,
}

pub fn execute(args: LintArgs) -> anyhow::Result<u8> {
    let selection = Selection::new(&args.select, &args.ignore)?;
    // A file named on the command line is linted whatever its name, unless its extension
    // says it is something else: Markdown parsed as Python would report "no problems".
    if let Some(path) = args.paths.iter().find(|p| p.is_file() && !walk::may_be_python(p)) {
        anyhow::bail!("{}: not a Python file (lint reads .py and .pyi files, and scripts without an extension)", path.display());
    }
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let outcome = walk::lint_paths(&args.paths, &selection, threads);
    if outcome.files == 0 && outcome.unreadable.is_empty() {
        let palette = Palette::new(args.color.for_stderr());
        eprintln!("{}warning{}: No Python files found under the given path(s)", palette.warning, palette.reset);
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match args.format {
        Format::Text => output::write_text(&mut out, &outcome, &Palette::new(args.color.for_stdout()))?,
        Format::Json => output::write_json(&mut out, &outcome)?,
        Format::Sarif => output::write_sarif(&mut out, &outcome)?,
        Format::Github => output::write_github(&mut out, &outcome)?,
    }
    out.flush()?;
    let palette = Palette::new(args.color.for_stderr());
    for unreadable in &outcome.unreadable {
        eprintln!(
            "{}error{}: cannot read {}: {}",
            palette.error, palette.reset, unreadable.path, unreadable.message
        );
    }
    Ok(if !outcome.unreadable.is_empty() {
        exit::USAGE
    } else if !outcome.findings.is_empty() && !args.exit_zero {
        exit::PROBLEMS_FOUND
    } else {
        exit::OK
    })
}
