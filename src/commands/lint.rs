//! `assertscope lint PATH…`: static checks of training code (the crate `assertscope-lint`;
//! what a person reads is drawn by `crate::lint_render`).
//!
//! Exit status as with ruff: 0 nothing found (or `--exit-zero`), 1 problems found, 2 a path
//! could not be read or the arguments are wrong.

use crate::exit;
use crate::lint::config::Configs;
use crate::lint::walk::{FixMode, WalkOptions};
use crate::lint::{output, walk, Selection};
use crate::lint_render;
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
    /// Apply the safe fixes and write the files back; report what is left
    #[arg(long)]
    pub fix: bool,
    /// Apply the unsafe fixes too (with --fix or --diff); without either, count them as fixable
    #[arg(long)]
    pub unsafe_fixes: bool,
    /// Print the fixes as a unified diff instead of writing them (exit 1 when there is one)
    #[arg(long, conflicts_with = "fix")]
    pub diff: bool,
    /// Use this pyproject.toml's [tool.assertscope.lint] for every file, instead of each
    /// file's nearest one (its globs are relative to the current directory)
    #[arg(long, value_name = "FILE", conflicts_with = "isolated")]
    pub config: Option<PathBuf>,
    /// Read no configuration file: the command line and the defaults only
    #[arg(long)]
    pub isolated: bool,
    /// Apply `exclude` to the paths named on the command line too (as pre-commit names files)
    #[arg(long)]
    pub force_exclude: bool,
}

pub fn execute(args: LintArgs) -> anyhow::Result<u8> {
    let command_line = Selection::new(&args.select, &args.ignore)?;
    let configs = Configs::new(args.config.as_deref(), args.isolated, command_line)?;
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let fix = match (args.fix, args.diff) {
        (true, _) => FixMode::Apply { unsafe_fixes: args.unsafe_fixes },
        (_, true) => FixMode::Diff { unsafe_fixes: args.unsafe_fixes },
        _ => FixMode::Report,
    };
    let options = WalkOptions { configs: &configs, threads, force_exclude: args.force_exclude, fix };
    let outcome = walk::lint_paths(&args.paths, &options)?;
    if outcome.files == 0 && outcome.unreadable.is_empty() {
        // As ruff says it: not "no problems found", which would read as a clean bill.
        let palette = Palette::new(args.color.for_stderr());
        eprintln!(
            "{}warning{}: No Python files found under the given path(s)",
            palette.warning, palette.reset
        );
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let palette = Palette::new(args.color.for_stdout());
    if args.diff {
        lint_render::write_diff(&mut out, &outcome, &palette)?;
    } else {
        match args.format {
            Format::Text => lint_render::write_text(&mut out, &outcome, &palette, args.unsafe_fixes)?,
            Format::Json => output::write_json(&mut out, &outcome)?,
            Format::Sarif => output::write_sarif(&mut out, &outcome)?,
            Format::Github => output::write_github(&mut out, &outcome)?,
        }
    }
    out.flush()?;
    let palette = Palette::new(args.color.for_stderr());
    for unreadable in &outcome.unreadable {
        eprintln!(
            "{}error{}: cannot read {}: {}",
            palette.error, palette.reset, unreadable.path, unreadable.message
        );
    }
    for changed in outcome.changed.iter().filter(|c| !c.converged) {
        eprintln!(
            "{}warning{}: {}: the fixes did not settle after {} rounds; the file holds the last round's",
            palette.warning,
            palette.reset,
            changed.path,
            crate::lint::fix::MAX_ITERATIONS
        );
    }
    let problems = if args.diff { !outcome.changed.is_empty() } else { !outcome.findings.is_empty() };
    Ok(if !outcome.unreadable.is_empty() {
        exit::USAGE
    } else if problems && !args.exit_zero {
        exit::PROBLEMS_FOUND
    } else {
        exit::OK
    })
}
