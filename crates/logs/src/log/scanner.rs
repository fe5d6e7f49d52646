//! The scan itself: each line a source hands out, fed to the state that gathers what the
//! log reveals (assertions, tracebacks, error lines, stated sizes, divergence, Ray's workers).

use super::assertion::{self, AssertionLine, DsaReport};
use super::chatter::{self, StatedSize};
use super::reader::LineSource;
use super::traceback::{self, Builder, Fed, Style, Traceback};
use super::triggers::triggers;
use super::{line, paste, ray, wrap};
use std::borrow::Cow;
use std::collections::HashMap;

/// Consecutive identical assertion lines (one per failing GPU thread), collapsed.
#[derive(Debug, Clone)]
pub struct AssertionGroup {
    pub assertion: AssertionLine,
    pub rank: Option<u32>,
    pub count: u64,
    pub first_log_line: u64,
    /// The assertion came from a DSA report rather than a printed line.
    pub from_dsa_report: bool,
}

#[derive(Debug, Clone)]
pub struct RankedTraceback {
    pub rank: Option<u32>,
    pub traceback: Traceback,
}

/// A line outside any traceback that reports an error (an NCCL watchdog line, a C++
/// `what():`, an exception printed by a logger).
#[derive(Debug, Clone)]
pub struct ErrorLine {
    pub rank: Option<u32>,
    pub log_line: u64,
    pub text: String,
}

/// A metric printed as NaN, inf or an absurdly large number.
#[derive(Debug, Clone)]
pub struct Divergence {
    pub rank: Option<u32>,
    pub log_line: u64,
    pub metric: String,
    pub value: String,
    pub text: String,
}

/// Everything one log revealed.
#[derive(Debug, Clone, Default)]
pub struct LogScan {
    /// The input's name as the user gave it (`-` for stdin).
    pub source: String,
    pub assertions: Vec<AssertionGroup>,
    pub tracebacks: Vec<RankedTraceback>,
    pub errors: Vec<ErrorLine>,
    pub sizes: Vec<StatedSize>,
    pub divergence: Vec<Divergence>,
    /// Ray Train's workers: which process and node each rank ran in.
    pub workers: Vec<ray::Worker>,
    pub lines: u64,
    pub bytes: u64,
}

const MAX_ASSERTION_GROUPS: usize = 256;
const MAX_TRACEBACKS: usize = 256;
const MAX_ERRORS: usize = 2048;
const MAX_SIZES: usize = 256;
const MAX_DIVERGENCE: usize = 64;
const MAX_ERROR_TEXT: usize = 1000;

pub(super) fn scan_lines<L: LineSource>(
    mut reader: L,
    source: &str,
    rank: Option<u32>,
) -> std::io::Result<LogScan> {
    let mut state = ScanState::new(source, rank);
    loop {
        let line = if state.needs_every_line() {
            reader.next_line()?
        } else {
            reader.next_matching_line(triggers())?
        };
        let Some(line) = line else { break };
        let number = line.number;
        let text = String::from_utf8_lossy(line.bytes);
        // NUL padding (a node died while writing) is not part of any line.
        let text =
            if memchr::memchr(0, line.bytes).is_some() { Cow::Owned(text.replace('\0', "")) } else { text };
        // Progress bars repaint with `\r`; every repaint is a line of its own.
        for segment in text.split('\r') {
            state.feed(segment, number);
        }
    }
    let mut scan = state.finish();
    scan.lines = reader.line_number().saturating_sub(1).max(if reader.bytes_read() > 0 { 1 } else { 0 });
    scan.bytes = reader.bytes_read();
    Ok(scan)
}

/// What makes two assertion lines the same group: rank, condition, line, kernel, file name.
type GroupKey = (Option<u32>, String, Option<u64>, String, String);

struct ScanState {
    scan: LogScan,
    default_rank: Option<u32>,
    builders: HashMap<Option<u32>, Builder>,
    /// A line that a terminal or forum may have wrapped, held until the next line shows
    /// whether it continues: (rank, text, log line).
    held: Option<(Option<u32>, String, u64)>,
    /// Rank -> log line of the last "During handling…" / "The above exception…" marker.
    chain_markers: HashMap<Option<u32>, u64>,
    dsa: DsaReport,
    dsa_rank: Option<u32>,
    group_index: HashMap<GroupKey, usize>,
    ray: ray::RayLines,
    /// Log line of anomaly mode's "Traceback of forward call that caused the error": the
    /// stack printed after it is a warning's context, not an error's traceback.
    forward_call_stack: Option<u64>,
}

impl ScanState {
    fn new(source: &str, default_rank: Option<u32>) -> ScanState {
        ScanState {
            scan: LogScan { source: source.to_string(), ..LogScan::default() },
            default_rank,
            builders: HashMap::new(),
            held: None,
            chain_markers: HashMap::new(),
            dsa: DsaReport::default(),
            dsa_rank: None,
            group_index: HashMap::new(),
            ray: ray::RayLines::default(),
            forward_call_stack: None,
        }
    }

    fn needs_every_line(&self) -> bool {
        !self.builders.is_empty()
            || self.dsa.current.is_some()
            || !self.chain_markers.is_empty()
            || self.held.is_some()
    }

    fn feed(&mut self, raw: &str, number: u64) {
        let clean = line::strip_ansi(raw);
        // A block-quoted paste quotes the launcher's prefix too.
        let unquoted = clean.strip_prefix("> ").filter(|rest| rest.starts_with('[')).unwrap_or(&clean);
        let ray = self.ray.read(unquoted);
        let prefixed = line::strip_rank_prefix(ray.text);
        let rank = ray.rank.or(prefixed.rank).or(self.default_rank);
        let text = paste::repair(prefixed.text);
        let mut text: Cow<'_, str> = text;
        if let Some((held_rank, held, held_number)) = self.held.take() {
            match wrap::rejoin(&held, &text).filter(|_| held_rank == rank) {
                Some(joined) => text = Cow::Owned(joined),
                None => self.parse(held_rank, &held, held_number),
            }
        }
        if wrap::may_continue(&text) {
            self.held = Some((rank, text.into_owned(), number));
            return;
        }
        self.parse(rank, &text, number);
    }

    fn parse(&mut self, rank: Option<u32>, text: &str, number: u64) {
        if let Some(builder) = self.builders.get_mut(&rank) {
            match builder.feed(text, number) {
                Fed::Consumed => return,
                Fed::EndedWith(tb) => {
                    self.builders.remove(&rank);
                    self.push_traceback(rank, tb);
                    return;
                }
                Fed::EndedBefore(tb) => {
                    self.builders.remove(&rank);
                    self.push_traceback(rank, tb);
                }
            }
        }
        self.idle(rank, text, number);
    }

    fn idle(&mut self, rank: Option<u32>, text: &str, number: u64) {
        if self.dsa.feed(text) {
            self.dsa_rank = rank;
            return;
        }
        if let Some(a) = self.dsa.take() {
            self.push_assertion(self.dsa_rank, a, number, true);
        }
        if text.contains("Traceback of forward call that caused the error") {
            self.forward_call_stack = Some(number);
        }
        if text.contains("ssertion") || text.contains("SSERTION") {
            if let Some(a) = assertion::parse(text) {
                self.push_assertion(rank, a, number, false);
                return;
            }
        }
        // A kernel's place without the word "Assertion": its words were translated away.
        if (text.contains(".cu:") || text.contains(".cuh:"))
            && text.contains("],")
            && !text.contains("ssertion")
        {
            if let Some(a) = assertion::parse_place_only(text) {
                self.push_assertion(rank, a, number, false);
                return;
            }
        }
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return;
        }
        if let Some(style) = traceback::header_style(text) {
            let chained = self.chain_markers.remove(&rank).is_some_and(|m| number <= m + 4);
            self.builders.insert(rank, Builder::new(style, number).chained(chained).header_type_from(text));
            return;
        }
        if let Some(current) = traceback::faulthandler_header(text) {
            self.builders.insert(rank, Builder::new(Style::Faulthandler, number).current_thread(current));
            return;
        }
        if trimmed.starts_with("During handling of the above exception")
            || trimmed.starts_with("The above exception was the direct cause")
        {
            self.chain_markers.insert(rank, number);
            return;
        }
        if let Some(&marker) = self.chain_markers.get(&rank) {
            if number > marker + 4 {
                self.chain_markers.remove(&rank);
            }
        }
        if let Some(frame) = traceback::python_frame(text, number) {
            self.builders.insert(rank, Builder::from_frame(frame));
            return;
        }
        if traceback::ipython_frame_start(text) {
            let mut builder = Builder::new(Style::IPython, number);
            let _ = builder.feed(text, number);
            self.builders.insert(rank, builder);
            return;
        }
        self.note_error(rank, trimmed, number);
        self.note_chatter(rank, trimmed, number);
    }

    fn note_error(&mut self, rank: Option<u32>, text: &str, number: u64) {
        let text = text.strip_prefix("what():").map_or(text, str::trim);
        let kb = crate::kb::KnowledgeBase::get();
        let relevant = looks_like_error_line(text)
            || kb.match_followon(text).is_some()
            || kb.match_message(text).is_some()
            || kb.mentions_known_text(text);
        if !relevant || self.scan.errors.len() >= MAX_ERRORS {
            return;
        }
        let rank = rank.or_else(|| rank_in_text(text));
        let mut text = text.to_string();
        if text.len() > MAX_ERROR_TEXT {
            let mut end = MAX_ERROR_TEXT;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
        }
        self.scan.errors.push(ErrorLine { rank, log_line: number, text });
    }

    fn note_chatter(&mut self, rank: Option<u32>, text: &str, number: u64) {
        if self.scan.sizes.len() < MAX_SIZES {
            self.scan.sizes.extend(chatter::stated_sizes(text, number));
        }
        if self.scan.divergence.len() < MAX_DIVERGENCE {
            if let Some((metric, value)) = chatter::divergence(text) {
                self.scan.divergence.push(Divergence {
                    rank,
                    log_line: number,
                    metric,
                    value,
                    text: text.chars().take(300).collect(),
                });
            }
        }
    }

    fn push_assertion(&mut self, rank: Option<u32>, a: AssertionLine, number: u64, from_dsa_report: bool) {
        let key = (
            rank,
            crate::kb::collapse_whitespace(&a.condition),
            a.line,
            a.kernel.clone(),
            a.file.rsplit(['/', '\\']).next().unwrap_or("").to_string(),
        );
        if let Some(&i) = self.group_index.get(&key) {
            self.scan.assertions[i].count += 1;
            return;
        }
        if self.scan.assertions.len() >= MAX_ASSERTION_GROUPS {
            return;
        }
        self.group_index.insert(key, self.scan.assertions.len());
        self.scan.assertions.push(AssertionGroup {
            assertion: a,
            rank,
            count: 1,
            first_log_line: number,
            from_dsa_report,
        });
    }

    fn push_traceback(&mut self, rank: Option<u32>, traceback: Traceback) {
        if let Some(at) = self.forward_call_stack {
            let first = traceback.frames.first().map_or(traceback.log_line, |f| f.log_line);
            if first == at || first == at + 1 {
                self.forward_call_stack = None;
                return;
            }
        }
        // A DSA report printed inside an exception message names the failed assertion.
        if let Some(exc) = &traceback.innermost().exception {
            let mut dsa = DsaReport::default();
            let mut found = Vec::new();
            for l in &exc.continuation {
                if !dsa.feed(l) {
                    found.extend(dsa.take());
                }
            }
            found.extend(dsa.take());
            for a in found {
                self.push_assertion(rank, a, exc.log_line, true);
            }
        }
        if self.scan.tracebacks.len() >= MAX_TRACEBACKS {
            // Keep the first and the latest tracebacks; the middle of a long log of
            // repeated errors adds nothing.
            self.scan.tracebacks.remove(MAX_TRACEBACKS / 2);
        }
        self.scan.tracebacks.push(RankedTraceback { rank, traceback });
    }

    fn finish(mut self) -> LogScan {
        if let Some((rank, held, number)) = self.held.take() {
            self.parse(rank, &held, number);
        }
        if let Some(a) = self.dsa.take() {
            let n = self.scan.lines;
            self.push_assertion(self.dsa_rank, a, n, true);
        }
        let mut open: Vec<_> = self.builders.drain().collect();
        open.sort_by_key(|(rank, _)| *rank);
        for (rank, builder) in open {
            let tb = builder.finish();
            self.push_traceback(rank, tb);
        }
        self.scan.tracebacks.sort_by_key(|t| t.traceback.log_line);
        self.scan.workers = self.ray.into_workers();
        self.scan
    }
}

/// `RuntimeError: …`-like lines printed outside a traceback (by a logger, a C++
/// `what():`), as opposed to chatter that merely contains the word "error".
fn looks_like_error_line(text: &str) -> bool {
    let head = text.split(':').next().unwrap_or("");
    let last = head.rsplit('.').next().unwrap_or(head);
    (!head.contains(' ')
        && (last.ends_with("Error") || last.ends_with("Exception") || traceback::is_retyped_error_name(last)))
        || is_library_error_prefix(head)
}

/// `CUDA error`, `NCCL error`, `HIP error`: the prefix a GPU library's error carries inside
/// the exception's message, printed alone where the exception's type was not (a repr).
fn is_library_error_prefix(head: &str) -> bool {
    head.split_once(' ').is_some_and(|(library, word)| {
        word == "error" && library.len() >= 3 && library.bytes().all(|b| b.is_ascii_uppercase())
    })
}

/// The rank named inside a message, as NCCL's watchdog writes it: `[Rank 3]`.
fn rank_in_text(text: &str) -> Option<u32> {
    let i = text.find("Rank ")?;
    let digits: String = text[i + 5..].chars().take_while(|c| c.is_ascii_digit()).collect();
    if text[i + 5 + digits.len()..].starts_with(']') {
        digits.parse().ok()
    } else {
        None
    }
}
