//! JSON: one object with every finding and every unreadable path.

use crate::walk::LintRun;
use serde_json::json;
use std::io::{self, Write};

pub const SCHEMA: &str = "assertscope.lint/1";

pub fn write_json(out: &mut dyn Write, outcome: &LintRun) -> io::Result<()> {
    let value = json!({
        "schema": SCHEMA,
        "findings": outcome.findings,
        "unreadable": outcome.unreadable,
        "files": outcome.files,
        "lines": outcome.lines,
        "fixed": outcome.fixed,
    });
    serde_json::to_writer_pretty(&mut *out, &value)?;
    writeln!(out)
}
