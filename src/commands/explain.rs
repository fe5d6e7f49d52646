//! `assertscope explain`: a crash log (a file, several per-rank files, a directory of
//! them, or stdin) to its root cause, the user's line and the fix.

use crate::diagnose;
use crate::diagnose::inputs::{read_inputs, Inputs, Notice};
use crate::render::{self, style::ColorChoice, style::Palette};
use crate::report::Report;
use anyhow::Context;
use std::io::{self, Write};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  assertscope explain train.log\n  python train.py 2>&1 | assertscope explain\n  assertscope explain logs/rank*.txt --json\n  assertscope explain torchrun-logs/"
)]
pub struct ExplainArgs {
    /// Log files, or directories of per-rank logs; `-` (or nothing, when piped) reads stdin
    pub inputs: Vec<PathBuf>,
    /// Print one assertscope.diagnosis/1 JSON object
    #[arg(long)]
    pub json: bool,
    /// When to use colours
    #[arg(long, value_enum, default_value_t)]
    pub color: ColorChoice,
}

pub fn execute(args: ExplainArgs) -> anyhow::Result<u8> {
    let inputs = read_inputs(&args.inputs)?;
    let unreadable = inputs.unreadable_count();
    for notice in &inputs.notices {
        match notice {
            Notice::Unreadable(err) => render::style::print_error(err),
            Notice::Skipped(file, why) => eprintln!("assertscope: skipped {}: {why}", file.display()),
        }
    }
    let Inputs { scans, reports, .. } = inputs;
    if scans.is_empty() && reports.is_empty() && unreadable > 0 {
        // Every input was unreadable, and each has had its line: nothing to diagnose.
        return Ok(crate::exit::USAGE);
    }
    let report = diagnose::diagnose_job(&scans, &reports);
    let subject = if scans.len() + reports.len() == 1 { "the log" } else { "the logs" };
    print_report(&report, args.json, args.color, subject)?;
    // As ripgrep does: what could be read is reported, and an input that could not be
    // read makes the status 2, since the diagnosis may lack what it held.
    Ok(if unreadable > 0 { crate::exit::USAGE } else { exit_status(&report) })
}

/// 0 when a diagnosis names a problem, 1 when there is none.
pub fn exit_status(report: &Report) -> u8 {
    if report.found_problem() {
        crate::exit::DIAGNOSED
    } else {
        crate::exit::NO_ERROR_FOUND
    }
}

pub fn print_report(report: &Report, json: bool, color: ColorChoice, subject: &str) -> anyhow::Result<()> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let written = if json {
        render::json::write_report(&mut out, report)
    } else {
        let palette = Palette::new(color.for_stdout());
        out.write_all(render::human::render(report, &palette, subject).as_bytes())
    };
    match written {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing the report"),
    }
}
