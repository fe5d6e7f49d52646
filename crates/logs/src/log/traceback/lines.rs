//! One line of a log read as part of a traceback: a header, a frame (CPython, IPython 7
//! and 8), an exception line, a marker line, by the patterns they are printed in.

use super::parsed::{ExceptionText, Frame, Style};
use regex::Regex;
use std::sync::OnceLock;

const MAX_KEPT_LINE: usize = 2000;

pub(super) struct Patterns {
    pub(super) python_frame: Regex,
    pub(super) ipython8_cell: Regex,
    pub(super) ipython8_file: Regex,
    pub(super) ipython7_frame: Regex,
    pub(super) ipython_arrow: Regex,
    pub(super) ipython_context: Regex,
    pub(super) exception_line: Regex,
    pub(super) log_record: Regex,
}

pub(super) fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        python_frame: Regex::new(r#"^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:,? in (?P<func>.+))?$"#)
            .unwrap(),
        ipython8_cell: Regex::new(
            r"^\s*Cell (?P<file>In ?\[\d*\]), line (?P<line>\d+)(?:, in (?P<func>.+))?$",
        )
        .unwrap(),
        ipython8_file: Regex::new(r"^\s*File (?P<file>[^\s\x22].*?):(?P<line>\d+)(?:, in (?P<func>.+))?$")
            .unwrap(),
        ipython7_frame: Regex::new(r"^(?P<file>\S+) in (?P<func>\S.*)$").unwrap(),
        ipython_arrow: Regex::new(r"^-*> ?(?P<line>\d+)(?: (?P<code>.*))?$").unwrap(),
        ipython_context: Regex::new(r"^\s*\d+(?:\s|$)").unwrap(),
        exception_line: Regex::new(r"^(?P<type>[A-Za-z_][\w.]*(?:\[[\w., ]*\])?)(?::(?: (?P<msg>.*))?)?$")
            .unwrap(),
        log_record: Regex::new(
            r"^(?:\[?[IWEFD]\d{4} \d\d:\d\d|\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\[(?:W|E|I) [\w.]+:\d+\])",
        )
        .unwrap(),
    })
}

/// Whether a line opens a traceback, and in which style.
pub fn header_style(text: &str) -> Option<Style> {
    let i = text.find("Traceback (most recent call last)")?;
    let before = text[..i].trim_end();
    // IPython prints the exception type before the header, padded with spaces.
    if text[i..].trim_end().ends_with(')') && !before.is_empty() && patterns().exception_line.is_match(before)
    {
        Some(Style::IPython)
    } else {
        Some(Style::Python)
    }
}

/// A faulthandler thread header: `Thread 0x… (most recent call first):`.
pub fn faulthandler_header(text: &str) -> Option<bool> {
    let t = text.trim();
    if t.ends_with("(most recent call first):")
        && (t.starts_with("Thread 0x") || t.starts_with("Current thread 0x"))
    {
        Some(t.starts_with("Current"))
    } else {
        None
    }
}

/// Parses `  File "x.py", line 3, in f` into a frame.
pub fn python_frame(text: &str, log_line: u64) -> Option<Frame> {
    let c = patterns().python_frame.captures(text)?;
    Some(Frame {
        file: c["file"].to_string(),
        line: c["line"].parse().ok(),
        function: c.name("func").map(|m| m.as_str().trim().to_string()),
        code: None,
        carets: None,
        log_line,
    })
}

/// An IPython 7 / Colab frame header: `<ipython-input-3-…> in f()`, `/path/x.py in f(a, b)`,
/// Databricks' `<command-123> in <module>`.
pub fn ipython7_frame(trimmed: &str) -> Option<(&str, regex::Match<'_>)> {
    let c = patterns().ipython7_frame.captures(trimmed)?;
    let file = c.name("file")?.as_str();
    let notebook_file = file.ends_with(".py")
        || (file.starts_with("<ipython-input-") && file.ends_with('>'))
        || (file.starts_with("<command-") && file.ends_with('>'));
    if !notebook_file {
        return None;
    }
    Some((file, c.name("func")?))
}

/// Whether a line starts a notebook traceback that lost its header.
pub fn ipython_frame_start(text: &str) -> bool {
    let p = patterns();
    let trimmed = text.trim();
    p.ipython8_cell.is_match(text)
        || (p.ipython8_file.is_match(text) && !trimmed.starts_with("File \""))
        || ipython7_frame(trimmed).is_some_and(|(_, func)| func.as_str().contains('('))
}

/// Whether a line is an exception line (`Name: message`) of a known shape.
pub fn is_exception_line(text: &str) -> bool {
    let Some(c) = patterns().exception_line.captures(text) else { return false };
    let ty = &c["type"];
    c.name("msg").is_some() || looks_like_exception_type(ty)
}

pub(super) fn looks_like_exception_type(name: &str) -> bool {
    let last = name.rsplit('.').next().unwrap_or(name);
    is_retyped_error_name(last)
        || last.ends_with("Error")
        || last.ends_with("Exception")
        || last.ends_with("Interrupt")
        || last.ends_with("Exit")
        || last.ends_with("Failure")
        || last.ends_with("Warning")
        || matches!(last, "StopIteration" | "GeneratorExit" | "KeyError")
}

/// An exception's name typed again in lower case (`runtimeerror`, `indexerror`): longer
/// than its suffix, so that a plain `error:` is not one.
pub fn is_retyped_error_name(name: &str) -> bool {
    name.len() > "exception".len()
        && name.bytes().all(|b| b.is_ascii_lowercase())
        && (name.ends_with("error") || name.ends_with("exception"))
}

/// Whether a line is an exception line with a known type and a message (`ValueError: …`),
/// as an indented exception line must be to be taken for one.
pub(super) fn is_typed_exception_line(trimmed: &str) -> bool {
    patterns()
        .exception_line
        .captures(trimmed)
        .is_some_and(|c| c.name("msg").is_some() && looks_like_exception_type(&c["type"]))
}

/// Caret and tilde lines that point at an expression, and recursion notes.
pub(super) fn is_marker_line(trimmed: &str) -> bool {
    trimmed.bytes().all(|b| matches!(b, b'^' | b'~' | b' '))
        || (trimmed.starts_with("[Previous line repeated") && trimmed.ends_with(']'))
        || trimmed == "..."
}

/// Splits `Type: message` (the type may be dotted: `torch.AcceleratorError`).
pub fn parse_exception(text: &str, log_line: u64) -> ExceptionText {
    let text = text.trim_end();
    if let Some(c) = patterns().exception_line.captures(text) {
        let ty = c["type"].to_string();
        if c.name("msg").is_some() || looks_like_exception_type(&ty) {
            return ExceptionText {
                type_name: Some(ty),
                message: clip(c.name("msg").map_or("", |m| m.as_str()).trim()).to_string(),
                continuation: Vec::new(),
                log_line,
            };
        }
    }
    ExceptionText {
        type_name: None,
        message: clip(text.trim()).to_string(),
        continuation: Vec::new(),
        log_line,
    }
}

pub(super) fn clip(s: &str) -> &str {
    if s.len() <= MAX_KEPT_LINE {
        return s;
    }
    let mut end = MAX_KEPT_LINE;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}
