//! Python tracebacks as they appear in logs: plain CPython (3.8 to 3.13, with `^^^`
//! markers), IPython 8 (`Cell In[7], line 12`, `File path:line, in f`), IPython 7 /
//! Colab (`<ipython-input-3-…> in f()`, `---> 10` arrows), faulthandler dumps, and the
//! `Original Traceback` that DataLoader workers and DataParallel replicas embed in the
//! message of the exception they re-raise.

use regex::Regex;
use std::sync::OnceLock;

/// Most frames kept per traceback: the outermost few and the innermost many, which is
/// where the user's code and the failing op are.
const KEEP_OUTER_FRAMES: usize = 8;
const KEEP_INNER_FRAMES: usize = 120;
/// Most continuation lines kept from an exception message.
const KEEP_MESSAGE_LINES: usize = 40;
const MAX_KEPT_LINE: usize = 2000;
/// A message longer than this many lines is cut (a dump, not a message).
const MAX_MESSAGE_LINES: usize = 2000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub file: String,
    pub line: Option<u64>,
    pub function: Option<String>,
    pub code: Option<String>,
    /// The part of `code` Python 3.11+ marks with `^^^` (or `~~~^^^`): the expression the
    /// frame was running, as character offsets `[start, end)` into `code`.
    pub carets: Option<(usize, usize)>,
    /// Line of the log the frame was read from.
    pub log_line: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Python,
    IPython,
    /// `faulthandler` thread dumps list the innermost frame first.
    Faulthandler,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExceptionText {
    /// `RuntimeError`, `torch.AcceleratorError`, ...; None when the line had no type.
    pub type_name: Option<String>,
    /// The first line of the message.
    pub message: String,
    /// Later lines of the message (bounded).
    pub continuation: Vec<String>,
    pub log_line: u64,
}

impl ExceptionText {
    /// The message and its continuation lines.
    pub fn lines(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.message.as_str()).chain(self.continuation.iter().map(String::as_str))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Traceback {
    pub style: Style,
    /// Log line of the header (or of the first frame when the header is missing).
    pub log_line: u64,
    /// Outermost first (faulthandler dumps are reversed into this order too).
    pub frames: Vec<Frame>,
    /// Frames dropped from the middle of a very deep traceback.
    pub elided_frames: u64,
    pub exception: Option<ExceptionText>,
    /// The traceback a DataLoader worker or DataParallel replica raised originally.
    pub original: Option<Box<Traceback>>,
    /// Printed after "During handling of the above exception…" or "The above exception
    /// was the direct cause…": a consequence of the previous traceback.
    pub chained: bool,
    /// For faulthandler dumps: the thread was the current one.
    pub current_thread: bool,
    /// The exception type IPython prints before its header (`IndexError   Traceback …`):
    /// known even when the paste stops before the message.
    pub header_type: Option<String>,
}

impl Traceback {
    fn new(style: Style, log_line: u64) -> Traceback {
        Traceback {
            style,
            log_line,
            frames: Vec::new(),
            elided_frames: 0,
            exception: None,
            original: None,
            chained: false,
            current_thread: false,
            header_type: None,
        }
    }

    /// The exception that was raised first: the original one of a re-raise, else this one.
    pub fn innermost(&self) -> &Traceback {
        match &self.original {
            Some(o) => o.innermost(),
            None => self,
        }
    }

    /// Whether an indented line is this traceback's exception: a known exception type with
    /// a message, after at least one frame.
    fn exception_type_known(&self, trimmed: &str) -> bool {
        !self.frames.is_empty()
            && patterns()
                .exception_line
                .captures(trimmed)
                .is_some_and(|c| c.name("msg").is_some() && looks_like_exception_type(&c["type"]))
    }

    fn push_frame(&mut self, frame: Frame) {
        if self.frames.len() >= KEEP_OUTER_FRAMES + KEEP_INNER_FRAMES {
            self.frames.remove(KEEP_OUTER_FRAMES);
            self.elided_frames += 1;
        }
        self.frames.push(frame);
    }
}

struct Patterns {
    python_frame: Regex,
    ipython8_cell: Regex,
    ipython8_file: Regex,
    ipython7_frame: Regex,
    ipython_arrow: Regex,
    ipython_context: Regex,
    exception_line: Regex,
    log_record: Regex,
}

fn patterns() -> &'static Patterns {
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

fn looks_like_exception_type(name: &str) -> bool {
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

/// What a builder did with a line.
pub enum Fed {
    /// The line belonged to the traceback.
    Consumed,
    /// The traceback ended; the line was not part of it and must be looked at again.
    EndedBefore(Traceback),
    /// The traceback ended with this line.
    EndedWith(Traceback),
}

enum Phase {
    Frames,
    Message { lines: usize, blank_pending: bool },
}

/// Builds one traceback from the lines that follow its header.
pub struct Builder {
    tb: Traceback,
    phase: Phase,
    nested: Option<Box<Builder>>,
    /// Lines in a row that were neither frames nor code, while expecting frames.
    strays: usize,
    /// The first unindented line that was not an exception line: the exception when the
    /// traceback ends without one.
    tentative: Option<ExceptionText>,
    /// How far the last frame's code line was indented, to place its `^^^` line.
    code_indent: usize,
}

impl Builder {
    pub fn new(style: Style, log_line: u64) -> Builder {
        Builder {
            tb: Traceback::new(style, log_line),
            phase: Phase::Frames,
            nested: None,
            strays: 0,
            tentative: None,
            code_indent: 0,
        }
    }

    pub fn chained(mut self, chained: bool) -> Builder {
        self.tb.chained = chained;
        self
    }

    /// The exception type an IPython header names.
    pub fn header_type_from(mut self, header: &str) -> Builder {
        if self.tb.style == Style::IPython {
            if let Some(i) = header.find("Traceback (most recent call last)") {
                self.tb.header_type = header[..i]
                    .split_whitespace()
                    .last()
                    .map(|t| t.trim_start_matches(|c: char| !c.is_ascii_alphabetic()).to_string());
            }
        }
        self
    }

    pub fn current_thread(mut self, current: bool) -> Builder {
        self.tb.current_thread = current;
        self
    }

    /// A builder that starts at a frame line (the header was lost or cut off).
    pub fn from_frame(frame: Frame) -> Builder {
        let mut b = Builder::new(Style::Python, frame.log_line);
        b.tb.frames.push(frame);
        b
    }

    pub fn style(&self) -> Style {
        self.tb.style
    }

    /// Ends the traceback where it stands (end of input).
    pub fn finish(mut self) -> Traceback {
        if let Some(nested) = self.nested.take() {
            self.tb.original = Some(Box::new(nested.finish()));
        }
        self.take()
    }

    pub fn feed(&mut self, text: &str, log_line: u64) -> Fed {
        if let Some(nested) = self.nested.as_mut() {
            match nested.feed(text, log_line) {
                Fed::Consumed => return Fed::Consumed,
                Fed::EndedWith(original) => {
                    self.nested = None;
                    self.tb.original = Some(Box::new(original));
                    return Fed::EndedWith(self.take());
                }
                Fed::EndedBefore(original) => {
                    self.nested = None;
                    self.tb.original = Some(Box::new(original));
                    return Fed::EndedBefore(self.take());
                }
            }
        }
        match self.phase {
            Phase::Frames => self.feed_frames(text, log_line),
            Phase::Message { .. } => self.feed_message(text, log_line),
        }
    }

    fn take(&mut self) -> Traceback {
        let mut tb = std::mem::replace(&mut self.tb, Traceback::new(Style::Python, 0));
        if tb.exception.is_none() {
            tb.exception = self.tentative.take();
        }
        if tb.style == Style::Faulthandler {
            tb.frames.reverse();
        }
        tb
    }

    fn feed_frames(&mut self, text: &str, log_line: u64) -> Fed {
        let p = patterns();
        let trimmed = text.trim();
        if trimmed.is_empty() {
            // Only IPython separates frames with blank lines; elsewhere a blank line after a
            // line that stood in for the exception ends the traceback.
            let ended = match self.tb.style {
                Style::Faulthandler => !self.tb.frames.is_empty(),
                Style::Python => self.tentative.is_some(),
                Style::IPython => false,
            };
            return if ended { Fed::EndedWith(self.take()) } else { Fed::Consumed };
        }
        if header_style(text).is_some() || faulthandler_header(text).is_some() || text.contains("Assertion `")
        {
            return Fed::EndedBefore(self.take());
        }
        if let Some(frame) = python_frame(text, log_line) {
            self.tentative = None;
            self.strays = 0;
            self.tb.push_frame(frame);
            return Fed::Consumed;
        }
        if self.tb.style == Style::Faulthandler {
            return Fed::EndedBefore(self.take());
        }
        if is_marker_line(trimmed) {
            self.note_carets(text, log_line);
            return Fed::Consumed;
        }
        // Notebook frames, also in a paste that lost the IPython header.
        if let Some(c) = p.ipython8_cell.captures(text) {
            self.push_ipython_frame(
                format!("Cell {}", &c["file"]),
                c["line"].parse().ok(),
                c.name("func"),
                log_line,
            );
            return Fed::Consumed;
        }
        if let Some(c) = p.ipython8_file.captures(text) {
            self.push_ipython_frame(c["file"].to_string(), c["line"].parse().ok(), c.name("func"), log_line);
            return Fed::Consumed;
        }
        if self.tb.style == Style::IPython {
            if let Some(c) = p.ipython_arrow.captures(trimmed) {
                if let Some(frame) = self.tb.frames.last_mut() {
                    if frame.code.is_none() {
                        frame.code =
                            c.name("code").map(|m| m.as_str().trim().to_string()).filter(|s| !s.is_empty());
                    }
                    if frame.line.is_none() {
                        frame.line = c["line"].parse().ok();
                    }
                }
                return Fed::Consumed;
            }
            if p.ipython_context.is_match(text) {
                return Fed::Consumed;
            }
            if let Some((file, func)) = ipython7_frame(trimmed) {
                if !is_exception_line(trimmed) {
                    self.push_ipython_frame(file.to_string(), None, Some(func), log_line);
                    return Fed::Consumed;
                }
            }
        }
        let indented = text.starts_with(' ') || text.starts_with('\t');
        let exception_like = is_exception_line(trimmed) && !trimmed.contains(" = ");
        let code_slot_open =
            self.tb.frames.last().is_some_and(|f| f.code.is_none() && f.log_line + 1 == log_line);
        if code_slot_open && (indented || !exception_like) {
            // The code line under a frame (also when a paste lost its indentation).
            let frame = self.tb.frames.last_mut().expect("checked above");
            frame.code = Some(clip(trimmed).to_string());
            self.code_indent = text.chars().take_while(|c| c.is_whitespace()).count();
            return Fed::Consumed;
        }
        if exception_like && (!indented || self.tb.exception_type_known(trimmed)) {
            // The exception line, also when a logger or a paste indented it.
            self.tb.exception = Some(parse_exception(trimmed, log_line));
            self.phase = Phase::Message { lines: 0, blank_pending: false };
            return Fed::Consumed;
        }
        if !indented && self.tentative.is_none() {
            // An unindented line that is neither a frame nor an exception: most likely code
            // that lost its indentation or the rest of a wrapped line, but kept as the
            // exception in case the traceback ends without a proper one.
            self.tentative = Some(parse_exception(text, log_line));
        }
        self.strays += 1;
        if self.strays > 40 {
            return Fed::EndedBefore(self.take());
        }
        Fed::Consumed
    }

    /// The `^^^` line under a frame's code: which part of it was running.
    fn note_carets(&mut self, text: &str, log_line: u64) {
        let indent = self.code_indent;
        let Some(frame) = self.tb.frames.last_mut() else { return };
        if frame.carets.is_some() || frame.log_line + 2 != log_line {
            return;
        }
        let Some(code) = &frame.code else { return };
        let marks: Vec<usize> =
            text.chars().enumerate().filter(|(_, c)| matches!(c, '^' | '~')).map(|(i, _)| i).collect();
        let (Some(&first), Some(&last)) = (marks.first(), marks.last()) else { return };
        let (start, end) = (first.saturating_sub(indent), (last + 1).saturating_sub(indent));
        if first >= indent && end <= code.chars().count() {
            frame.carets = Some((start, end));
        }
    }

    fn push_ipython_frame(
        &mut self,
        file: String,
        line: Option<u64>,
        func: Option<regex::Match<'_>>,
        log_line: u64,
    ) {
        let function = func.map(|f| {
            let f = f.as_str().trim();
            // IPython prints the signature: `Module._call_impl(self, *args)`.
            match f.find('(') {
                Some(i) if i > 0 => f[..i].to_string(),
                _ => f.to_string(),
            }
        });
        self.strays = 0;
        self.tb.push_frame(Frame { file, line, function, code: None, carets: None, log_line });
    }

    fn feed_message(&mut self, text: &str, log_line: u64) -> Fed {
        let trimmed = text.trim();
        let Phase::Message { lines, blank_pending } = &mut self.phase else { unreachable!() };
        if trimmed.is_empty() {
            // A DataParallel message ends in a blank line before its Original Traceback only
            // in some versions; one blank line is allowed before that header.
            if *blank_pending {
                return Fed::EndedWith(self.take());
            }
            *blank_pending = true;
            return Fed::Consumed;
        }
        let after_blank = std::mem::replace(blank_pending, false);
        if trimmed.starts_with("Original Traceback (most recent call last)") {
            self.nested = Some(Box::new(Builder::new(Style::Python, log_line)));
            return Fed::Consumed;
        }
        if after_blank {
            return Fed::EndedBefore(self.take());
        }
        if header_style(text).is_some()
            || faulthandler_header(text).is_some()
            || text.contains("Assertion `")
            || patterns().log_record.is_match(trimmed)
            || trimmed.starts_with("During handling of the above exception")
            || trimmed.starts_with("The above exception was the direct cause")
        {
            return Fed::EndedBefore(self.take());
        }
        *lines += 1;
        if *lines > MAX_MESSAGE_LINES {
            return Fed::EndedBefore(self.take());
        }
        // C++ backtraces inside c10::Error messages carry nothing for a diagnosis.
        if trimmed.starts_with("frame #") {
            return Fed::Consumed;
        }
        if let Some(exc) = self.tb.exception.as_mut() {
            if exc.continuation.len() < KEEP_MESSAGE_LINES {
                exc.continuation.push(clip(trimmed).to_string());
            }
        }
        let _ = log_line;
        Fed::Consumed
    }
}

/// Caret and tilde lines that point at an expression, and recursion notes.
fn is_marker_line(trimmed: &str) -> bool {
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

fn clip(s: &str) -> &str {
    if s.len() <= MAX_KEPT_LINE {
        return s;
    }
    let mut end = MAX_KEPT_LINE;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(style: Style, lines: &[&str]) -> Traceback {
        let mut b = Builder::new(style, 1);
        for (i, l) in lines.iter().enumerate() {
            match b.feed(l, i as u64 + 2) {
                Fed::Consumed => {}
                Fed::EndedWith(tb) | Fed::EndedBefore(tb) => return tb,
            }
        }
        b.finish()
    }

    #[test]
    fn python_traceback_with_carets() {
        let tb = build(
            Style::Python,
            &[
                "  File \"/tmp/asc/digits-mlp/train.py\", line 48, in main",
                "    loss = criterion(logits, y)",
                "           ^^^^^^^^^^^^^^^^^^^^",
                "  File \"/venv/lib/python3.11/site-packages/torch/nn/functional.py\", line 3555, in cross_entropy",
                "    return torch._C._nn.cross_entropy_loss(",
                "IndexError: Target 10 is out of bounds.",
                "",
            ],
        );
        assert_eq!(tb.frames.len(), 2);
        assert_eq!(tb.frames[0].code.as_deref(), Some("loss = criterion(logits, y)"));
        // The carets mark `criterion(logits, y)`: characters 7 to 27 of the code.
        assert_eq!(tb.frames[0].carets, Some((7, 27)));
        assert_eq!(tb.frames[1].function.as_deref(), Some("cross_entropy"));
        assert_eq!(tb.frames[1].carets, None);
        let e = tb.exception.unwrap();
        assert_eq!(e.type_name.as_deref(), Some("IndexError"));
        assert_eq!(e.message, "Target 10 is out of bounds.");
    }

    #[test]
    fn message_continuation_and_original_traceback() {
        let tb = build(
            Style::Python,
            &[
                "  File \"/usr/lib/python3.8/dist-packages/torch/_utils.py\", line 461, in reraise",
                "    raise exception",
                "RuntimeError: Caught RuntimeError in replica 1 on device 1.",
                "Original Traceback (most recent call last):",
                "  File \"/data/retina/models/focal.py\", line 24, in forward",
                "    pt = torch.exp(-ce)",
                "RuntimeError: CUDA error: device-side assert triggered",
                "CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be incorrect.",
                "",
            ],
        );
        assert_eq!(tb.exception.as_ref().unwrap().message, "Caught RuntimeError in replica 1 on device 1.");
        let original = tb.innermost();
        assert_eq!(original.frames[0].file, "/data/retina/models/focal.py");
        let e = original.exception.as_ref().unwrap();
        assert_eq!(e.message, "CUDA error: device-side assert triggered");
        assert_eq!(e.continuation.len(), 1);
    }

    #[test]
    fn ipython8_frames() {
        let tb = build(
            Style::IPython,
            &[
                "Cell In[7], line 12",
                "     10 optimizer.zero_grad()",
                "---> 12 loss = criterion(outputs, labels)",
                "",
                "File ~/miniconda3/envs/dl/lib/python3.11/site-packages/torch/nn/functional.py:3555, in cross_entropy(input, target)",
                "-> 3555 return torch._C._nn.cross_entropy_loss(",
                "",
                "RuntimeError: CUDA error: device-side assert triggered",
            ],
        );
        assert_eq!(tb.frames[0].file, "Cell In[7]");
        assert_eq!(tb.frames[0].line, Some(12));
        assert_eq!(tb.frames[0].code.as_deref(), Some("loss = criterion(outputs, labels)"));
        assert_eq!(tb.frames[1].function.as_deref(), Some("cross_entropy"));
        assert_eq!(tb.exception.unwrap().type_name.as_deref(), Some("RuntimeError"));
    }

    #[test]
    fn ipython7_frames() {
        let tb = build(
            Style::IPython,
            &[
                "<ipython-input-3-404b011a3eca> in forward(self, text)",
                "      9     def forward(self, text):",
                "---> 10         embedded = self.dropout(self.embedding(text))",
                "",
                "RuntimeError: CUDA error: device-side assert triggered",
            ],
        );
        assert_eq!(tb.frames[0].file, "<ipython-input-3-404b011a3eca>");
        assert_eq!(tb.frames[0].line, Some(10));
        assert_eq!(tb.frames[0].function.as_deref(), Some("forward"));
    }

    #[test]
    fn header_styles() {
        assert_eq!(header_style("Traceback (most recent call last):"), Some(Style::Python));
        assert_eq!(
            header_style("RuntimeError                              Traceback (most recent call last)"),
            Some(Style::IPython)
        );
        assert_eq!(
            header_style("  62/200 [01:13<02:42]Traceback (most recent call last):"),
            Some(Style::Python)
        );
    }

    #[test]
    fn exception_lines() {
        let e = parse_exception("torch.AcceleratorError: CUDA error: device-side assert triggered", 1);
        assert_eq!(e.type_name.as_deref(), Some("torch.AcceleratorError"));
        let e = parse_exception("KeyboardInterrupt", 1);
        assert_eq!(e.type_name.as_deref(), Some("KeyboardInterrupt"));
        assert!(!is_exception_line("loss 2.3"));
        assert!(is_exception_line("ValueError: bad"));
    }
}
