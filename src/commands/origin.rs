//! `assertscope origin [REPORT | -]`: one guard report (or one diagnosis with its
//! `runtime` facts) in, the same document out with the origin of its bad value filled in:
//! `diagnosis.origin` (the proved steps), `origin_end` and `dataset_indices`. The guard
//! calls it on the error path when no `run` collects its report.

use crate::guard_report::{self, GuardReport};
use crate::origin::runtime::Runtime;
use crate::render::style::{ColorChoice, Palette};
use crate::report::{Diagnosis, Report};
use anyhow::Context;
use std::io::{Read, Write};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  assertscope origin guard-1234.json\n  assertscope origin - < report.json\n  assertscope origin --text guard-1234.json"
)]
pub struct OriginArgs {
    /// A guard report (assertscope.guard-report/1) or a diagnosis with `runtime` facts; `-` reads stdin
    #[arg(default_value = "-")]
    pub input: PathBuf,
    /// Print the diagnosis for people instead of the JSON document
    #[arg(long)]
    pub text: bool,
    /// When to use colours (with --text)
    #[arg(long, value_enum, default_value_t)]
    pub color: ColorChoice,
}

/// The largest document read: a guard report is a few kilobytes, with notebook cells a
/// few hundred.
const MAX_INPUT: u64 = 64 << 20;

pub fn execute(args: OriginArgs) -> anyhow::Result<u8> {
    let name =
        if args.input.as_os_str() == "-" { "stdin".to_string() } else { args.input.display().to_string() };
    let text = read(&args.input).with_context(|| name.clone())?;
    let mut document: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{name}: not JSON ({e})"))?;
    let diagnosis = if document.get("schema").and_then(|s| s.as_str()) == Some(guard_report::SCHEMA) {
        let mut report =
            GuardReport::parse(&text).map_err(|e| anyhow::anyhow!("{name}: not a guard report ({e})"))?;
        crate::origin::trace(&mut report.diagnosis, report.runtime.as_ref(), &[]);
        document = serde_json::to_value(&report)?;
        report.diagnosis
    } else if document.get("cause").is_some() {
        let runtime: Option<Runtime> = match document.get("runtime") {
            Some(r) => {
                Some(serde_json::from_value(r.clone()).map_err(|e| anyhow::anyhow!("{name}: runtime: {e}"))?)
            }
            None => None,
        };
        let mut diagnosis: Diagnosis = serde_json::from_value(document.clone())
            .map_err(|e| anyhow::anyhow!("{name}: not a diagnosis ({e})"))?;
        crate::origin::trace(&mut diagnosis, runtime.as_ref(), &[]);
        let mut filled = serde_json::to_value(&diagnosis)?;
        if let (Some(object), Some(r)) = (filled.as_object_mut(), document.get("runtime")) {
            object.insert("runtime".into(), r.clone());
        }
        document = filled;
        diagnosis
    } else {
        anyhow::bail!("{name}: neither a guard report ({}) nor a diagnosis", guard_report::SCHEMA);
    };
    let mut out = std::io::stdout().lock();
    let written = if args.text {
        let report = Report { diagnoses: vec![diagnosis], ..Report::default() };
        let palette = Palette::new(args.color.for_stdout());
        out.write_all(crate::render::human::render(&report, &palette, "the report").as_bytes())
    } else {
        serde_json::to_writer_pretty(&mut out, &document)
            .map_err(std::io::Error::other)
            .and_then(|()| writeln!(out))
    };
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.context("writing the report")?,
    }
    Ok(crate::exit::DIAGNOSED)
}

fn read(input: &std::path::Path) -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    if input.as_os_str() == "-" {
        std::io::stdin().lock().take(MAX_INPUT + 1).read_to_end(&mut bytes)?;
    } else {
        std::fs::File::open(input)?.take(MAX_INPUT + 1).read_to_end(&mut bytes)?;
    }
    anyhow::ensure!(
        bytes.len() as u64 <= MAX_INPUT,
        "larger than {} MiB: not a guard report",
        MAX_INPUT >> 20
    );
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!("not UTF-8 text (invalid byte at offset {})", e.utf8_error().valid_up_to())
    })
}
