//! The JSON rendering: one `assertscope.diagnosis/1` object.

use crate::report::Report;
use std::io::Write;

pub fn write_report(out: &mut dyn Write, report: &Report) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    writeln!(out)
}
