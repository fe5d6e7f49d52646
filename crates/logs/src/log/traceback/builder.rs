//! [`Builder`]: one traceback built from the lines that follow its header, frames first,
//! then the exception and its message, and a nested `Original Traceback` in that message.

use super::lines::{
    clip, faulthandler_header, header_style, ipython7_frame, is_exception_line, is_marker_line,
    is_typed_exception_line, parse_exception, patterns, python_frame,
};
use super::parsed::{ExceptionText, Frame, Style, Traceback};

/// Most continuation lines kept from an exception message.
const KEEP_MESSAGE_LINES: usize = 40;
/// A message longer than this many lines is cut (a dump, not a message).
const MAX_MESSAGE_LINES: usize = 2000;

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
        if let Some(fed) = self.feed_notebook_frame(text, trimmed, log_line) {
            return fed;
        }
        self.feed_code_or_exception(text, trimmed, log_line)
    }

    /// A frame line of a notebook (IPython 8's `Cell In[7], line 12`, IPython 7's
    /// `<ipython-input-…> in f()` and its `---> 10` arrows), also in a paste that lost the
    /// IPython header; None when the line is none of these.
    fn feed_notebook_frame(&mut self, text: &str, trimmed: &str, log_line: u64) -> Option<Fed> {
        let p = patterns();
        if let Some(c) = p.ipython8_cell.captures(text) {
            self.push_ipython_frame(
                format!("Cell {}", &c["file"]),
                c["line"].parse().ok(),
                c.name("func"),
                log_line,
            );
            return Some(Fed::Consumed);
        }
        if let Some(c) = p.ipython8_file.captures(text) {
            self.push_ipython_frame(c["file"].to_string(), c["line"].parse().ok(), c.name("func"), log_line);
            return Some(Fed::Consumed);
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
                return Some(Fed::Consumed);
            }
            if p.ipython_context.is_match(text) {
                return Some(Fed::Consumed);
            }
            if let Some((file, func)) = ipython7_frame(trimmed) {
                if !is_exception_line(trimmed) {
                    self.push_ipython_frame(file.to_string(), None, Some(func), log_line);
                    return Some(Fed::Consumed);
                }
            }
        }
        None
    }

    /// A line in the frames that is no frame: the code line under a frame, the exception
    /// line (which starts the message), or a stray line (kept as the exception in case
    /// none comes; too many in a row end the traceback).
    fn feed_code_or_exception(&mut self, text: &str, trimmed: &str, log_line: u64) -> Fed {
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
        if exception_like && (!indented || (!self.tb.frames.is_empty() && is_typed_exception_line(trimmed))) {
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
