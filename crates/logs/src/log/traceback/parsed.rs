//! A traceback once read: its frames (file, line, function, code, `^^^` columns), its
//! exception and message, the style it was printed in, and the traceback a DataLoader
//! worker or DataParallel replica embedded in its message.

/// Most frames kept per traceback: the outermost few and the innermost many, which is
/// where the user's code and the failing op are.
const KEEP_OUTER_FRAMES: usize = 8;
const KEEP_INNER_FRAMES: usize = 120;

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
    pub(super) fn new(style: Style, log_line: u64) -> Traceback {
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

    pub(super) fn push_frame(&mut self, frame: Frame) {
        if self.frames.len() >= KEEP_OUTER_FRAMES + KEEP_INNER_FRAMES {
            self.frames.remove(KEEP_OUTER_FRAMES);
            self.elided_frames += 1;
        }
        self.frames.push(frame);
    }
}
