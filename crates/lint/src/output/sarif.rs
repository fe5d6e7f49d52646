//! SARIF 2.1.0, the format code-scanning services read (`--format sarif > lint.sarif`).

use crate::rules;
use crate::violation::{Violation, SYNTAX_ERROR};
use crate::walk::LintRun;
use serde_json::{json, Value};
use std::io::{self, Write};

const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

pub fn write_sarif(out: &mut dyn Write, outcome: &LintRun) -> io::Result<()> {
    let descriptors = rule_descriptors();
    let index_of = |code: &str| descriptors.iter().position(|d| d["id"] == code);
    let results: Vec<Value> = outcome.findings.iter().map(|f| result(f, index_of(f.code))).collect();
    let notifications: Vec<Value> = outcome
        .unreadable
        .iter()
        .map(|u| {
            json!({
                "level": "error",
                "message": {"text": format!("cannot read {}: {}", u.path, u.message)},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri(&u.path)}}}],
            })
        })
        .collect();
    let log = json!({
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "assertscope",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": env!("CARGO_PKG_HOMEPAGE"),
                "rules": descriptors,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
            "invocations": [{
                "executionSuccessful": outcome.unreadable.is_empty(),
                "toolExecutionNotifications": notifications,
            }],
        }],
    });
    serde_json::to_writer_pretty(&mut *out, &log)?;
    writeln!(out)
}

/// Every rule's descriptor, then the pseudo-rule syntax errors are reported under.
fn rule_descriptors() -> Vec<Value> {
    let mut descriptors: Vec<Value> = rules::ALL
        .iter()
        .map(|rule| {
            let doc = &rule.doc;
            json!({
                "id": doc.code,
                "name": doc.name,
                "shortDescription": {"text": doc.summary},
                "fullDescription": {"text": doc.what_it_does},
                "help": {
                    "text": format!("{}\n\nWhy it matters: {}\n\nFix: {}", doc.what_it_does, doc.why_it_matters, doc.fix),
                },
                "helpUri": help_uri(doc.code),
                "defaultConfiguration": {"level": doc.severity.as_str()},
                "properties": {"cause": doc.cause, "autofix": doc.autofix.describe()},
            })
        })
        .collect();
    descriptors.push(json!({
        "id": SYNTAX_ERROR,
        "name": SYNTAX_ERROR,
        "shortDescription": {"text": "the file is not valid Python; the rest of it is still checked"},
        "defaultConfiguration": {"level": "error"},
    }));
    descriptors
}

/// One finding: its message (with the help), where it is, and its evidence chain as
/// related locations.
fn result(f: &Violation, rule_index: Option<usize>) -> Value {
    let mut message = f.message.clone();
    if let Some(help) = &f.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let related: Vec<Value> = f
        .related
        .iter()
        .enumerate()
        .map(|(id, r)| {
            json!({
                "id": id,
                "message": {"text": r.label},
                "physicalLocation": physical_location(
                    &r.path, (r.line, r.column), (r.end_line, r.end_column), &r.source_line,
                ),
            })
        })
        .collect();
    json!({
        "ruleId": f.code,
        "ruleIndex": rule_index,
        "level": f.severity.as_str(),
        "message": {"text": message},
        "locations": [{
            "physicalLocation": physical_location(
                &f.path, (f.line, f.column), (f.end_line, f.end_column), &f.source_line,
            ),
        }],
        "relatedLocations": related,
    })
}

/// A region of a file, from (line, column) to (line, column), with its source line.
fn physical_location(path: &str, start: (usize, usize), end: (usize, usize), snippet: &str) -> Value {
    json!({
        "artifactLocation": {"uri": uri(path)},
        "region": {
            "startLine": start.0,
            "startColumn": start.1,
            "endLine": end.0,
            "endColumn": end.1,
            "snippet": {"text": snippet},
        },
    })
}

/// A rule's section of docs/rules.md at this version's tag.
pub fn help_uri(code: &str) -> String {
    format!(
        "{}/blob/v{}/docs/rules.md#{}",
        env!("CARGO_PKG_REPOSITORY"),
        env!("CARGO_PKG_VERSION"),
        code.to_ascii_lowercase()
    )
}

/// A path as a URI reference: `/` separators, reserved characters percent-encoded, absolute
/// paths as `file://` URIs.
fn uri(path: &str) -> String {
    let path = path.replace('\\', "/");
    let mut out = String::with_capacity(path.len());
    if path.starts_with('/') {
        out.push_str("file://");
    }
    for byte in path.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn paths_become_uri_references() {
        assert_eq!(super::uri("src/train.py"), "src/train.py");
        assert_eq!(super::uri("my dir/train #2.py"), "my%20dir/train%20%232.py");
        assert_eq!(super::uri("/abs/x.py"), "file:///abs/x.py");
    }
}
