//! GitHub Actions workflow commands (`--output-format github`, ruff's name for it): one
//! `::error …::` or `::warning …::` line per finding, which the Actions runner turns into an
//! annotation on the line of the pull request.

use crate::rule_doc::Severity;
use crate::violation::Violation;
use crate::walk::LintRun;
use std::io::{self, Write};

pub fn write_github(out: &mut dyn Write, outcome: &LintRun) -> io::Result<()> {
    for finding in &outcome.findings {
        write_annotation(out, finding)?;
    }
    for unreadable in &outcome.unreadable {
        writeln!(
            out,
            "::error title=assertscope,file={}::{}",
            property(&unreadable.path),
            data(&format!("cannot read {}: {}", unreadable.path, unreadable.message))
        )?;
    }
    Ok(())
}

fn write_annotation(out: &mut dyn Write, f: &Violation) -> io::Result<()> {
    let command = match f.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "notice",
    };
    let mut message = format!("{}:{}:{}: {} {}", f.path, f.line, f.column, f.code, f.message);
    for related in &f.related {
        message.push_str(&format!("\n{}:{}: {}", related.path, related.line, related.label));
    }
    if let Some(help) = &f.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    writeln!(
        out,
        "::{command} title={},file={},line={},col={},endLine={},endColumn={}::{}",
        property(&format!("assertscope ({})", f.code)),
        property(&f.path),
        f.line,
        f.column,
        f.end_line,
        f.end_column,
        data(&message)
    )
}

/// Escapes a command's message as the runner expects (`%`, CR and LF).
fn data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escapes a property value: as the message, plus the `:` and `,` that delimit properties.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_what_delimits_commands_and_properties() {
        assert_eq!(super::data("50% done\nnext"), "50%25 done%0Anext");
        assert_eq!(super::property("a,b:c.py"), "a%2Cb%3Ac.py");
    }
}
