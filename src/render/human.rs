//! The human rendering, in the manner of rustc's diagnostics: what happened, where in
//! the user's code, what was found, then why and the fix.

use super::style::Palette;
use crate::kb::KnowledgeBase;
use crate::report::{Diagnosis, Location, Report};
use std::fmt::Write as _;

const WIDTH: usize = 100;

fn checklist_step_text(step: u8) -> &'static str {
    KnowledgeBase::get().step(step).map_or("", |s| s.text.as_str())
}

/// Renders a report. `subject` names what was examined ("the log", "the run").
pub fn render(report: &Report, p: &Palette, subject: &str) -> String {
    let mut out = String::new();
    let Some(root) = report.root() else {
        let _ = writeln!(out, "{}no error found{} in {subject}", p.bold, p.reset);
        return out;
    };
    if root.cause == "none" {
        let _ = writeln!(
            out,
            "{}no tensor or CUDA error found{} in {subject}; it ends in a plain Python error.",
            p.bold, p.reset
        );
        let _ = writeln!(
            out,
            "{}note{}: {}",
            p.note,
            p.reset,
            root.title.trim_start_matches("no tensor or CUDA error: ")
        );
        if let Some(loc) = &root.location {
            write_location(&mut out, p, loc, None);
        }
        return out;
    }
    render_diagnosis(&mut out, root, p);
    if !report.secondary.is_empty() {
        let _ = writeln!(out, "{}also in {subject}{} (consequences, not causes):", p.bold, p.reset);
        for s in &report.secondary {
            let _ = writeln!(out, "  {}{}{}: {}", p.dim, s.cause, p.reset, s.text);
        }
    }
    for extra in report.diagnoses.iter().skip(1) {
        out.push('\n');
        render_diagnosis(&mut out, extra, p);
    }
    out
}

fn render_diagnosis(out: &mut String, d: &Diagnosis, p: &Palette) {
    let level =
        if d.cause == "cascade" || d.cause == "distributed-peer-failure" { p.warning } else { p.error };
    let _ = writeln!(out, "{level}error[{}]{}{}: {}{}", d.cause, p.reset, p.bold, d.title, p.reset);
    let surfaced = d.evidence.iter().any(|e| e.kind == "surfaced");
    if let Some(loc) = &d.location {
        let label = if surfaced { "the error surfaced here, not where it happened" } else { "here" };
        write_location(out, p, loc, Some(label));
    }
    let gutter = " ".repeat(line_width(d.location.as_ref()));
    for e in &d.evidence {
        if e.kind == "surfaced" {
            continue;
        }
        let at = e.source_line.map_or(String::new(), |l| format!(" {}(log line {l}){}", p.dim, p.reset));
        let _ = writeln!(out, "{gutter} {}={} {}: {}{at}", p.gutter, p.reset, e.kind, e.text);
    }
    if let Some(op) = &d.op {
        let _ = writeln!(out, "{gutter} {}={} op: {op}", p.gutter, p.reset);
    }
    if let Some(rank) = d.rank {
        let _ = writeln!(out, "{gutter} {}={} rank: {rank}", p.gutter, p.reset);
    }
    let shown: Vec<String> = d
        .values
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "assert_message" | "metric_line"))
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect();
    if !shown.is_empty() {
        let _ = writeln!(out, "{gutter} {}={} values: {}", p.gutter, p.reset, shown.join(", "));
    }
    for o in &d.origin {
        let what = o.note.clone().unwrap_or_else(|| format!("{} defined here", o.role));
        let _ = writeln!(out, "{}note{}: {what}", p.note, p.reset);
        let label = match o.role.as_str() {
            "data" => "made here",
            "call" => "ran here",
            _ => "defined here",
        };
        write_location_marked(out, p, &o.location(), Some(label), false);
    }
    out.push('\n');
    write_wrapped(out, &format!("{}why{}", p.note, p.reset), &d.explanation);
    write_wrapped(out, &format!("{}fix{}", p.help, p.reset), &d.fix);
    if let Some(step) = d.checklist_step {
        let _ = writeln!(out, "{}checklist step {step}{}: {}", p.dim, p.reset, checklist_step_text(step));
    }
    let _ = writeln!(out, "{}more{}: assertscope rules {}", p.dim, p.reset, d.cause);
}

fn line_width(loc: Option<&Location>) -> usize {
    loc.and_then(|l| l.line).map_or(1, |l| l.to_string().len())
}

/// `--> file:line in function`, then the source line with a caret underline.
fn write_location(out: &mut String, p: &Palette, loc: &Location, label: Option<&str>) {
    write_location_marked(out, p, loc, label, true);
}

/// As `write_location`; a secondary span (an origin) is underlined with `-`, as rustc does.
fn write_location_marked(out: &mut String, p: &Palette, loc: &Location, label: Option<&str>, primary: bool) {
    let width = line_width(Some(loc));
    let gutter = " ".repeat(width);
    let line = loc.line.map_or(String::new(), |l| format!(":{l}"));
    let func = loc.function.as_deref().map_or(String::new(), |f| format!(" in {f}"));
    let _ = writeln!(out, "{gutter}{}-->{} {}{line}{func}", p.gutter, p.reset, loc.file);
    // Prefer the file as it is on disk now; the log's copy of the line otherwise.
    let code = crate::diagnose::source_line(&loc.file, loc.line).or_else(|| loc.code.clone());
    if let (Some(code), Some(n)) = (code, loc.line) {
        let _ = writeln!(out, "{gutter} {}|{}", p.gutter, p.reset);
        let _ = writeln!(out, "{}{n}{} {}|{} {code}", p.gutter, p.reset, p.gutter, p.reset);
        if let Some(label) = label {
            let indent = code.chars().take_while(|c| c.is_whitespace()).count();
            let carets = (if primary { "^" } else { "-" }).repeat(code.trim().chars().count().max(1));
            let colour = if primary { p.error } else { p.note };
            let pad = " ".repeat(indent);
            let _ =
                writeln!(out, "{gutter} {}|{} {pad}{}{carets} {label}{}", p.gutter, p.reset, colour, p.reset);
        }
        let _ = writeln!(out, "{gutter} {}|{}", p.gutter, p.reset);
    }
}

fn write_wrapped(out: &mut String, label: &str, text: &str) {
    let mut first = true;
    for paragraph in text.split("\n\n").map(str::trim).filter(|p| !p.is_empty()) {
        let lead = if first { format!("{label}: ") } else { "     ".to_string() };
        first = false;
        let mut line = lead.clone();
        let mut visible = visible_len(&lead);
        for word in paragraph.split_whitespace() {
            if visible + word.len() + 1 > WIDTH && visible > 5 {
                out.push_str(line.trim_end());
                out.push('\n');
                line = "     ".to_string();
                visible = 5;
            }
            line.push_str(word);
            line.push(' ');
            visible += word.len() + 1;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

fn visible_len(s: &str) -> usize {
    crate::log::line::strip_ansi(s).chars().count()
}

/// `assertscope rules ID`: a cause, explained in full.
pub fn explain_cause(kb: &KnowledgeBase, id: &str, p: &Palette) -> Option<String> {
    let c = kb.cause(id)?;
    let mut out = String::new();
    let _ = writeln!(out, "{}{}{}: {}\n", p.bold, c.id, p.reset, c.title);
    write_wrapped(&mut out, &format!("{}why{}", p.note, p.reset), &c.explanation);
    out.push('\n');
    write_wrapped(&mut out, &format!("{}fix{}", p.help, p.reset), &c.fix);
    out.push('\n');
    let _ = writeln!(out, "{}example{}:", p.bold, p.reset);
    for l in c.example.trim().lines() {
        let _ = writeln!(out, "    {l}");
    }
    if let Some(step) = c.checklist_step() {
        let _ = writeln!(out, "\n{}checklist step {step}{}: {}", p.dim, p.reset, checklist_step_text(step));
    }
    let kernels: Vec<&str> = kb
        .asserts
        .iter()
        .filter(|a| a.cause == id && !a.internal)
        .map(|a| if a.kernel.is_empty() { a.condition.as_str() } else { a.kernel.as_str() })
        .collect();
    if !kernels.is_empty() {
        let mut uniq = kernels.clone();
        uniq.sort();
        uniq.dedup();
        let _ = writeln!(out, "\n{}kernels that assert it{}: {}", p.bold, p.reset, uniq.join(", "));
    }
    let messages: Vec<&str> =
        kb.messages.iter().filter(|m| m.cause == id).map(|m| m.example.as_str()).collect();
    if !messages.is_empty() {
        let _ = writeln!(out, "{}host-side messages{}:", p.bold, p.reset);
        for m in messages {
            let _ = writeln!(out, "    {m}");
        }
    }
    Some(out)
}
