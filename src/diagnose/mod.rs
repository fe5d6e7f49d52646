//! From the events of one or more logs to a [`Report`]: the root cause, the user's line,
//! the values, and which other errors are only consequences.
//!
//! The rules, in order of strength: a device-side assertion line names the failing
//! kernel, whatever the traceback says; a host-side message (the CPU twin of an assert, a
//! shape or dtype check) names its cause exactly; a CUDA error with no assertion line is
//! only a consequence of an earlier failure, unless the traceback is synchronous and ends
//! inside an op that can assert; follow-on errors (cuBLAS, cuDNN, NCCL) and ranks that
//! only waited are secondary.

pub mod frames;
mod guard;
pub mod inputs;
mod origin;
mod placement;
mod values;

use crate::guard_report::{self, GuardReport};
use crate::kb::{KnowledgeBase, Role};
use crate::log::traceback::{ExceptionText, Frame, Style, Traceback};
use crate::log::{AssertionGroup, LogScan};
use crate::report::{Confidence, Diagnosis, Evidence, Location, OriginLocation, Report, Secondary};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Where a failure was seen: a rank (from a prefix or a file name) or, for inputs without
/// ranks, the input itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum StreamKey {
    Rank(u32),
    Source(usize),
}

impl StreamKey {
    fn rank(self) -> Option<u32> {
        match self {
            StreamKey::Rank(r) => Some(r),
            StreamKey::Source(_) => None,
        }
    }
}

/// How strongly a failure explains the run's death; lower is stronger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Strength {
    /// assertscope's own guard caught the bad value before any kernel ran.
    Guard,
    Assertion,
    HostCheck,
    StickyAssert,
    Cascade,
    /// A traceback cut off before its message: only the op its innermost frames are in.
    CutTraceback,
    PlainError,
    Peer,
    /// A traceback cut off before its message, in no op the knowledge base knows: it
    /// still says where the user's code was when the error happened.
    CutUnknown,
}

/// One error seen in a stream, classified.
#[derive(Debug, Clone)]
struct Failure<'a> {
    strength: Strength,
    /// Cause id (None for a plain Python error).
    cause: Option<String>,
    op: Option<String>,
    title: Option<String>,
    hint: Option<String>,
    values: Map<String, Value>,
    /// The exception or error line, as printed.
    text: String,
    /// Position in the input: (source index, log line).
    at: (usize, u64),
    /// Recognised only by the stable part of a damaged message (cut off, glued).
    tolerant: bool,
    /// The user's line as the error itself names it (the guard's `-->` line).
    stated_location: Option<Location>,
    traceback: Option<&'a Traceback>,
    assertion: Option<&'a AssertionGroup>,
    followon: Option<&'static crate::kb::FollowOn>,
}

#[derive(Default)]
struct Stream<'a> {
    failures: Vec<Failure<'a>>,
    tracebacks: Vec<(usize, &'a Traceback)>,
}

/// Diagnoses a job from what its guard reported (`reports`, any order) and what its
/// output shows: the first process the guard stopped is the root; the logs tell which
/// other ranks only waited and which errors followed.
pub fn diagnose_job(scans: &[LogScan], reports: &[GuardReport]) -> Report {
    let from_log = diagnose(scans);
    let mut ordered: Vec<&GuardReport> = reports.iter().collect();
    ordered.sort_by(|a, b| a.time.total_cmp(&b.time));
    let Some((first, rest)) = ordered.split_first() else { return from_log };
    let mut report = Report::default();
    let mut root = first.diagnosis.clone();
    crate::origin::trace(&mut root, first.runtime.as_ref(), &[]);
    root.rank = root.rank.or(first.rank);
    root.evidence.extend(placement::from_report(first));
    let root_rank = root.rank;
    report.diagnoses.push(root);
    for other in rest {
        if other.pid == first.pid && other.host == first.host {
            continue;
        }
        report.secondary.push(Secondary {
            cause: other.diagnosis.cause.clone(),
            text: format!("{} also failed: {}", guard_report::who(other), other.diagnosis.title),
        });
    }
    // What else the output shows: follow-on errors, ranks that only waited.
    let log_root_rank = from_log.root().and_then(|d| d.rank);
    for s in from_log.secondary {
        if !report.secondary.contains(&s) {
            report.secondary.push(s);
        }
    }
    if let Some(d) = from_log.diagnoses.into_iter().next() {
        if d.rank != root_rank && (d.rank.is_some() || log_root_rank.is_none()) && d.cause != "none" {
            let who = d.rank.map_or("the output".to_string(), |r| format!("rank {r}"));
            let cause = if d.cause == "distributed-peer-failure" { d.cause } else { "cascade".to_string() };
            report.secondary.push(Secondary { cause, text: format!("{who}: {}", d.title) });
        }
    }
    report
}

/// Diagnoses one or more logs (several per-rank logs of one job, or one log).
pub fn diagnose(scans: &[LogScan]) -> Report {
    let kb = KnowledgeBase::get();
    let mut streams: BTreeMap<StreamKey, Stream<'_>> = BTreeMap::new();
    for (si, scan) in scans.iter().enumerate() {
        let key_of = |rank: Option<u32>| rank.map_or(StreamKey::Source(si), StreamKey::Rank);
        for t in &scan.tracebacks {
            let stream = streams.entry(key_of(t.rank)).or_default();
            stream.tracebacks.push((si, &t.traceback));
            if let Some(f) = classify_traceback(kb, si, &t.traceback) {
                stream.failures.push(f);
            }
        }
        for e in &scan.errors {
            if let Some(f) = classify_error_line(kb, si, e.log_line, &e.text) {
                streams.entry(key_of(e.rank)).or_default().failures.push(f);
            }
        }
        let assert_errors = assert_error_ranks(scan);
        for group in &scan.assertions {
            let key = attribute_assertion(&assert_errors, si, group);
            streams.entry(key).or_default().failures.push(assertion_failure(kb, si, group));
        }
    }

    // Each stream's own root: its strongest failure, the earliest among equals.
    let mut roots: Vec<(StreamKey, &Failure<'_>)> = Vec::new();
    for (key, stream) in &streams {
        if let Some(f) = stream.failures.iter().min_by_key(|f| (f.strength, f.at)) {
            roots.push((*key, f));
        }
    }
    roots.sort_by_key(|(key, f)| (f.strength, f.at, *key));
    let Some(&(root_key, root)) = roots.first() else {
        return Report::default();
    };

    let mut report = Report::default();
    report.diagnoses.push(build_diagnosis(kb, scans, &streams, root_key, root));
    report.secondary = secondary(&streams, root_key, root, scans);
    report
}

fn classify_traceback<'a>(kb: &'static KnowledgeBase, si: usize, tb: &'a Traceback) -> Option<Failure<'a>> {
    let inner = tb.innermost();
    let exc = inner.exception.as_ref().or(tb.exception.as_ref());
    let classified = exc.and_then(|e| classify_exception(kb, si, e));
    // No exception line, or only a stray line that stood in for one: the paste stopped
    // before the message.
    let cut = exc.is_none_or(|e| e.type_name.is_none());
    if cut && classified.as_ref().is_none_or(|f| f.strength == Strength::PlainError) {
        if let Some(f) = cut_traceback_failure(kb, si, tb) {
            return Some(f);
        }
        if classified.is_none() && frames::user_frame(tb).is_some() {
            return Some(cut_unknown_failure(si, tb));
        }
    }
    let exc = exc?;
    let mut f = classified?;
    f.traceback = Some(tb);
    apply_frames(kb, &mut f, tb, is_synchronous(exc));
    Some(f)
}

/// A traceback that stops before its message, read from its innermost frames: the op they
/// are in, and what bad values mean for it. Weak evidence: stated as low confidence.
fn cut_traceback_failure<'a>(
    kb: &'static KnowledgeBase,
    si: usize,
    tb: &'a Traceback,
) -> Option<Failure<'a>> {
    let Some((frame, op)) = frames::innermost_first(tb).into_iter().find_map(|frame| {
        let is_torch = frames::origin(&frame.file) == frames::Origin::Torch;
        kb.op_of_frame(frame.function.as_deref(), frame.code.as_deref(), is_torch).map(|op| (frame, op))
    }) else {
        return index_error_in_loss_call(si, tb);
    };
    let Some(cause) = op.bad_values.clone() else {
        return index_error_in_loss_call(si, tb);
    };
    let line = frame.line.map_or("?".to_string(), |l| l.to_string());
    let function = frame.function.as_deref().map_or(String::new(), |f| format!(", in {f}"));
    let hint = format!(
        "The log stops before the error message: the traceback ends inside {}, so the cause is read from its innermost frames, not from a message (low confidence). Paste the whole error to confirm it.",
        op.name
    );
    let text =
        format!("File \"{}\", line {line}{function} (the last frame before the log stops)", frame.file);
    let mut failure = cut(Strength::CutTraceback, Some(cause), hint, text, (si, frame.log_line), tb);
    failure.op = Some(op.name.clone());
    Some(failure)
}

/// A failure read from a traceback that stops before its message (low confidence).
fn cut<'a>(
    strength: Strength,
    cause: Option<String>,
    hint: String,
    text: String,
    at: (usize, u64),
    tb: &'a Traceback,
) -> Failure<'a> {
    Failure {
        strength,
        cause,
        op: None,
        title: None,
        hint: Some(hint),
        values: Map::new(),
        text,
        at,
        traceback: Some(tb),
        assertion: None,
        followon: None,
        tolerant: false,
        stated_location: None,
    }
}

/// A cut IPython traceback whose header says `IndexError`, stopped inside a loss module
/// called on a target (`criterion(output, target)`, `loss_fn(...)`): the IndexError a
/// class-index loss raises is its target check (`Target 4 is out of bounds`). Low
/// confidence: the message, and so the loss, is not in the log.
fn index_error_in_loss_call<'a>(si: usize, tb: &'a Traceback) -> Option<Failure<'a>> {
    static LOSS_CALL: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let loss_call = LOSS_CALL.get_or_init(|| {
        regex::Regex::new(r"(?i)\b(?:criterion|loss_fn|loss_func|loss_function|\w*_loss|\w*loss)\s*\(.*\b(?:target|label|labels|y|gt)\w*")
            .expect("the loss call pattern compiles")
    });
    if tb.header_type.as_deref() != Some("IndexError") {
        return None;
    }
    let frame = frames::user_frame(tb)?;
    frame.code.as_deref().filter(|code| loss_call.is_match(code))?;
    let line = frame.line.map_or("?".to_string(), |l| l.to_string());
    let hint = "The log stops before the error message: IPython's header says IndexError, and the last frame in your code calls a loss on the targets. A class-index loss raises IndexError for a target outside [0, C) (low confidence: the message is not in the log). Paste the whole error to confirm it.".to_string();
    let text = format!("IndexError in \"{}\", line {line} (the log stops before the message)", frame.file);
    Some(cut(
        Strength::CutTraceback,
        Some("target-out-of-range".into()),
        hint,
        text,
        (si, frame.log_line),
        tb,
    ))
}

/// A traceback that stops before its message inside no op the knowledge base knows: no
/// cause, but its deepest frame in the user's code, stated with low confidence. The
/// weakest failure: any error the log does show comes first.
fn cut_unknown_failure<'a>(si: usize, tb: &'a Traceback) -> Failure<'a> {
    let last = tb.innermost().frames.last().or(tb.frames.last());
    let at = last.map_or(tb.log_line, |f| f.log_line);
    let hint = "The log stops before the error message and its last frames are in no op assertscope knows: the error's cause is not in the log (low confidence). Paste the whole error to get it explained.".to_string();
    cut(
        Strength::CutUnknown,
        None,
        hint,
        "(the traceback stops before its error message)".to_string(),
        (si, at),
        tb,
    )
}

/// What the frames of a traceback say about the op, and what bad values mean there.
fn apply_frames(kb: &'static KnowledgeBase, f: &mut Failure<'_>, tb: &Traceback, synchronous: bool) {
    let bad_value_cause = f.cause.as_deref().is_some_and(is_bad_value_cause);
    match f.strength {
        // A synchronous traceback ends inside the op that raised; an index error inside
        // one_hot is a class target out of range.
        Strength::HostCheck | Strength::Assertion if bad_value_cause => {
            if let Some((op, cause)) = bad_value_op_in_frames(kb, tb).filter(|_| synchronous) {
                f.op = Some(op);
                f.cause = Some(cause);
            }
        }
        // Host-side checks raise at the call itself; an illegal access is only noticed later.
        Strength::HostCheck => {
            if let Some(op) =
                op_in_frames(kb, tb).filter(|_| f.cause.as_deref() != Some("illegal-memory-access"))
            {
                f.op = Some(op.name.clone());
            }
        }
        // A CUDA assert error with no assertion line in the log: synchronous and inside an
        // op that asserts on bad values, that op failed; otherwise the visible error only
        // follows an earlier failure, and the op is merely where it surfaced.
        Strength::StickyAssert if f.cause.as_deref().is_some_and(|c| c != "cascade") => {
            // The error named the kernel file that failed: its cause stands; the frames
            // may still say which of the file's ops it was.
            if let Some(op) = op_in_frames(kb, tb).filter(|o| o.bad_values == f.cause) {
                f.op = Some(op.name.clone());
            }
        }
        Strength::StickyAssert => {
            let op = op_in_frames(kb, tb);
            match op.and_then(|o| o.bad_values.clone()) {
                Some(cause) if synchronous => {
                    f.cause = Some(cause);
                    f.strength = Strength::HostCheck;
                }
                _ => f.cause = Some("cascade".into()),
            }
            f.op = op.map(|o| o.name.clone());
        }
        Strength::Cascade => f.op = op_in_frames(kb, tb).map(|o| o.name.clone()),
        _ => {}
    }
}

/// Whether a user-level op is one of those that reach an assertion site (its `ops`:
/// `F.one_hot`, `Tensor.index_select`, `tensor[idx] (...)`).
fn site_reaches(site: &crate::kb::AssertSite, op: &str) -> bool {
    site.op == op
        || site.ops.iter().any(|entry| {
            let name = entry.split(" (").next().unwrap_or(entry);
            let last = name.rsplit('.').next().unwrap_or(name).trim_end_matches("()");
            last.eq_ignore_ascii_case(op)
                || last.trim_end_matches('_') == op.trim_end_matches('_')
                || (op == "index" && name.starts_with("tensor[idx]"))
        })
}

fn is_bad_value_cause(cause: &str) -> bool {
    matches!(cause, "target-out-of-range" | "embedding-index-out-of-range" | "index-out-of-bounds")
}

/// The innermost op the frames show.
fn op_in_frames(kb: &'static KnowledgeBase, tb: &Traceback) -> Option<&'static crate::kb::OpSignature> {
    frames::innermost_first(tb).into_iter().find_map(|frame| {
        let is_torch = frames::origin(&frame.file) == frames::Origin::Torch;
        kb.op_of_frame(frame.function.as_deref(), frame.code.as_deref(), is_torch)
    })
}

/// The innermost op the frames show that can meet bad index values, with what they mean.
fn bad_value_op_in_frames(kb: &'static KnowledgeBase, tb: &Traceback) -> Option<(String, String)> {
    frames::innermost_first(tb).into_iter().find_map(|frame| {
        let is_torch = frames::origin(&frame.file) == frames::Origin::Torch;
        let op = kb.op_of_frame(frame.function.as_deref(), frame.code.as_deref(), is_torch)?;
        let cause = op.bad_values.as_deref().filter(|c| is_bad_value_cause(c))?;
        Some((op.name.clone(), cause.to_string()))
    })
}

fn classify_exception<'a>(kb: &'static KnowledgeBase, si: usize, exc: &ExceptionText) -> Option<Failure<'a>> {
    if let Some(f) = guard::failure(kb, si, exc) {
        return Some(f);
    }
    let first = full_first_line(exc);
    if let Some(mut f) = classify_text(kb, si, exc.log_line, &first) {
        name_failed_kernel(kb, &mut f, exc.lines());
        return Some(f);
    }
    // Launcher summaries and teardown noise explain nothing.
    if kb.match_followon(&first).is_some() {
        return None;
    }
    // A wrapped error (torch.compile, accelerate) can carry the real message below.
    for line in &exc.continuation {
        if let Some(m) = kb.match_message(line) {
            return Some(message_failure(m, si, exc.log_line, line));
        }
    }
    // A terminal or forum wrapped the message onto the next lines.
    let mut joined = first.clone();
    for next in exc.continuation.iter().take(MESSAGE_LINES_JOINED) {
        for candidate in [format!("{joined}{next}"), format!("{joined} {next}")] {
            if let Some(f) = classify_text(kb, si, exc.log_line, &candidate) {
                return Some(f);
            }
        }
        joined = format!("{joined} {next}");
    }
    if let Some(f) = classify_damaged_text(kb, si, exc.log_line, &first) {
        return Some(f);
    }
    if joined.len() > first.len() {
        if let Some(f) = classify_damaged_text(kb, si, exc.log_line, &joined) {
            return Some(f);
        }
    }
    Some(Failure {
        strength: Strength::PlainError,
        cause: None,
        op: None,
        title: None,
        hint: None,
        values: Map::new(),
        text: first,
        at: (si, exc.log_line),
        traceback: None,
        assertion: None,
        followon: None,
        tolerant: false,
        stated_location: None,
    })
}

/// A CUDA error that names the kernel source file where it was noticed (THC's
/// `… device-side assert triggered at /pytorch/aten/src/THCUNN/generic/ClassNLLCriterion.cu:87`,
/// `THCudaCheck FAIL file=…\THC\generic\THCTensorRandom.cu line=…`): when the file holds
/// the checks of one cause, that cause, and the op when it holds one op's checks.
fn name_failed_kernel<'t>(
    kb: &'static KnowledgeBase,
    f: &mut Failure<'_>,
    lines: impl Iterator<Item = &'t str>,
) {
    if f.strength != Strength::StickyAssert {
        return;
    }
    let Some(file) = lines.take(4).find_map(|l| kb.kernel_file_named_in(l)) else { return };
    let Some(cause) = file.only_cause() else { return };
    f.cause = Some(cause.to_string());
    f.op = file.only_op().map(str::to_string).or(f.op.take());
}

/// How many lines of a message are joined back when a terminal or forum broke it.
const MESSAGE_LINES_JOINED: usize = 3;

fn full_first_line(exc: &ExceptionText) -> String {
    match &exc.type_name {
        Some(t) if exc.message.is_empty() => t.clone(),
        Some(t) => format!("{t}: {}", exc.message),
        None => exc.message.clone(),
    }
}

/// Classifies one line of error text by the knowledge base.
fn classify_text<'a>(
    kb: &'static KnowledgeBase,
    si: usize,
    log_line: u64,
    text: &str,
) -> Option<Failure<'a>> {
    if let Some(m) = kb.match_message(text).or_else(|| kb.match_message_any_case(text)) {
        return Some(message_failure(m, si, log_line, text));
    }
    let followon = kb.match_followon(text)?;
    followon_failure(followon, si, log_line, text)
}

/// Classifies a line that matches no knowledge-base text exactly but is one that a paste
/// damaged (cut off mid-word, words glued together).
fn classify_damaged_text<'a>(
    kb: &'static KnowledgeBase,
    si: usize,
    log_line: u64,
    text: &str,
) -> Option<Failure<'a>> {
    if let Some(message) = kb.match_message_tolerant(text) {
        let m = crate::kb::MessageMatch { message, values: Map::new(), op: None };
        let mut f = message_failure(m, si, log_line, text);
        f.tolerant = true;
        return Some(f);
    }
    let mut f = followon_failure(kb.match_followon_tolerant(text)?, si, log_line, text)?;
    f.tolerant = true;
    Some(f)
}

fn followon_failure<'a>(
    followon: &'static crate::kb::FollowOn,
    si: usize,
    log_line: u64,
    text: &str,
) -> Option<Failure<'a>> {
    let strength = match followon.role {
        Role::StickyAssert => Strength::StickyAssert,
        Role::Cascade => Strength::Cascade,
        Role::Peer => Strength::Peer,
        Role::Trailer | Role::Teardown => return None,
    };
    let mut values = Map::new();
    let mut op = None;
    if followon.role == Role::Peer {
        if let Some(collective) = collective_op(text) {
            op = Some(collective);
        }
        if let Some(timeout) = number_after(text, "Timeout(ms)=") {
            values.insert("timeout_ms".into(), timeout.into());
        }
    }
    Some(Failure {
        strength,
        cause: followon.alone.clone(),
        op,
        title: None,
        hint: None,
        values,
        text: text.to_string(),
        at: (si, log_line),
        traceback: None,
        assertion: None,
        followon: Some(followon),
        tolerant: false,
        stated_location: None,
    })
}

fn message_failure<'a>(
    m: crate::kb::MessageMatch<'static>,
    si: usize,
    log_line: u64,
    text: &str,
) -> Failure<'a> {
    Failure {
        strength: Strength::HostCheck,
        cause: Some(m.message.cause.clone()),
        op: m.op.or_else(|| m.message.op.clone()),
        title: m.message.title.clone(),
        hint: m.message.hint.clone(),
        values: m.values,
        text: text.to_string(),
        at: (si, log_line),
        traceback: None,
        assertion: None,
        followon: None,
        tolerant: false,
        stated_location: None,
    }
}

fn classify_error_line<'a>(
    kb: &'static KnowledgeBase,
    si: usize,
    log_line: u64,
    text: &str,
) -> Option<Failure<'a>> {
    let mut f =
        classify_text(kb, si, log_line, text).or_else(|| classify_damaged_text(kb, si, log_line, text))?;
    name_failed_kernel(kb, &mut f, std::iter::once(text));
    // A bare exception line with no known message says too little to stand on its own.
    if f.strength == Strength::PlainError {
        return None;
    }
    Some(f)
}

fn assertion_failure<'a>(kb: &'static KnowledgeBase, si: usize, group: &'a AssertionGroup) -> Failure<'a> {
    let a = &group.assertion;
    let mut f = Failure {
        strength: Strength::Assertion,
        cause: Some("unknown-device-assert".into()),
        op: None,
        title: None,
        hint: None,
        values: Map::new(),
        text: assertion_text(group),
        at: (si, group.first_log_line),
        traceback: None,
        assertion: Some(group),
        followon: None,
        tolerant: false,
        stated_location: None,
    };
    if let Some(m) = kb.match_assert(&a.file, &a.kernel, &a.condition, a.message.as_deref()) {
        f.cause = Some(m.site.cause.clone());
        f.op = Some(m.site.op.clone());
        f.hint = Some(m.site.hint.clone());
        f.values = m.values;
        if m.site.internal {
            f.title = Some(format!("internal PyTorch check failed in {}", m.site.op));
        }
    } else {
        let kernel = crate::kb::kernel_name(&a.kernel);
        f.title = Some(if kernel.is_empty() {
            format!("device-side assert `{}` in an unknown kernel", a.condition)
        } else {
            format!("device-side assert `{}` in {kernel}, a kernel outside PyTorch", a.condition)
        });
    }
    if let Some(msg) = &a.message {
        values::from_printf_message(msg, &mut f.values);
    }
    f.values.insert("failing_threads".into(), group.count.into());
    f
}

fn assertion_text(group: &AssertionGroup) -> String {
    let a = &group.assertion;
    let mut s = a.file.clone();
    if let Some(l) = a.line {
        s.push_str(&format!(":{l}"));
    }
    if !a.kernel.is_empty() {
        s.push_str(&format!(": {}", a.kernel));
    }
    s.push_str(&format!(": Assertion `{}` failed.", a.condition));
    if let Some(m) = &a.message {
        s.push_str(&format!(" {m}"));
    }
    s
}

/// Whether a traceback ends in the CUDA error an assert leaves behind, or a follow-on.
fn shows_assert_error(tb: &Traceback) -> bool {
    tb.innermost().exception.as_ref().is_some_and(|e| {
        KnowledgeBase::get()
            .match_followon(&full_first_line(e))
            .is_some_and(|f| matches!(f.role, Role::StickyAssert | Role::Cascade))
    })
}

/// (log line, rank) of each ranked traceback that shows an assert error.
fn assert_error_ranks(scan: &LogScan) -> Vec<(u64, u32)> {
    scan.tracebacks
        .iter()
        .filter(|t| shows_assert_error(&t.traceback))
        .filter_map(|t| Some((t.traceback.log_line, t.rank?)))
        .collect()
}

/// Assertion lines printed by the GPU carry no rank prefix when the launcher prefixes only
/// Python's output: give them to the rank whose traceback shows the assert error (the
/// first reported after the assertion printed, else the first at all).
fn attribute_assertion(assert_errors: &[(u64, u32)], si: usize, group: &AssertionGroup) -> StreamKey {
    if let Some(r) = group.rank {
        return StreamKey::Rank(r);
    }
    assert_errors
        .iter()
        .filter(|(line, _)| *line >= group.first_log_line)
        .min()
        .or_else(|| assert_errors.iter().min())
        .map_or(StreamKey::Source(si), |&(_, r)| StreamKey::Rank(r))
}

/// No async warning after a CUDA error means CUDA_LAUNCH_BLOCKING was set (or the error
/// is not a CUDA error at all): the traceback points at the op that failed.
fn is_synchronous(exc: &ExceptionText) -> bool {
    let kb = KnowledgeBase::get();
    !exc.lines().any(|l| kb.match_followon(l).is_some_and(|f| f.id == ASYNC_HINT))
}

/// The follow-on entry (followons.toml) of PyTorch's asynchronous-error warning.
const ASYNC_HINT: &str = "async-hint";

fn collective_op(text: &str) -> Option<String> {
    let i = text.find("OpType=")? + "OpType=".len();
    let raw: String = text[i..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    let mut name = raw.trim_matches('_').to_ascii_lowercase();
    if let Some(stripped) = name.strip_suffix("_base") {
        name = stripped.to_string();
    }
    for (joined, split) in [
        ("allreduce", "all_reduce"),
        ("allgather", "all_gather"),
        ("reducescatter", "reduce_scatter"),
        ("alltoall", "all_to_all"),
    ] {
        if name == joined {
            name = split.to_string();
        }
    }
    (!name.is_empty()).then_some(name)
}

fn number_after(text: &str, key: &str) -> Option<i64> {
    let i = text.find(key)? + key.len();
    text[i..].chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse().ok()
}

/// What a diagnosis says, assembled step by step from the root failure and the log.
struct Draft {
    cause_id: String,
    op: Option<String>,
    values: Map<String, Value>,
    evidence: Vec<Evidence>,
    /// Where-to-look notes, shown before the cause's explanation.
    notes: Vec<String>,
    confidence: Confidence,
    title: Option<String>,
    hint: Option<String>,
    /// Where the bad value or the size it broke came from (secondary locations).
    origin: Vec<OriginLocation>,
}

fn build_diagnosis(
    kb: &'static KnowledgeBase,
    scans: &[LogScan],
    streams: &BTreeMap<StreamKey, Stream<'_>>,
    key: StreamKey,
    root: &Failure<'_>,
) -> Diagnosis {
    let stream = &streams[&key];
    let (si, _) = root.at;
    // The traceback that locates the failure: its own, or, for an assertion or an error
    // line, the one in the same stream where the error surfaced.
    let surfaced = root.traceback.map(|t| (si, t)).or_else(|| {
        locating_traceback(stream, root)
            .or_else(|| streams.get(&StreamKey::Source(si)).and_then(|s| locating_traceback(s, root)))
    });
    let mut draft = Draft {
        cause_id: root.cause.clone().unwrap_or_else(|| "none".into()),
        op: root.op.clone(),
        values: root.values.clone(),
        evidence: Vec::new(),
        notes: Vec::new(),
        confidence: match root.strength {
            Strength::Guard | Strength::Assertion | Strength::HostCheck | Strength::PlainError => {
                Confidence::High
            }
            Strength::StickyAssert | Strength::Cascade | Strength::Peer => Confidence::Medium,
            Strength::CutTraceback | Strength::CutUnknown => Confidence::Low,
        },
        title: root.title.clone(),
        hint: root.hint.clone(),
        origin: Vec::new(),
    };
    record_error(kb, root, surfaced.map(|(_, tb)| tb), &mut draft);
    let location = match surfaced {
        Some((_, tb)) => locate(kb, root, tb, &mut draft),
        None => root.stated_location.clone(),
    };
    read_rest_of_log(scans, key, root, &mut draft);
    compiled_code(&scans[si], root, &mut draft);
    draft.evidence.extend(placement::from_logs(scans, key.rank()));
    let mut diagnosis = write_up(kb, root, draft, location, key.rank());
    if let Some((_, tb)) = surfaced {
        origin_from_source(&mut diagnosis, tb);
    }
    diagnosis
}

/// Whether the file's line on disk is the code the traceback printed (so its `^^^` columns
/// hold for it).
fn same_code(file: &str, line: usize, code: Option<&str>) -> bool {
    let on_disk = crate::diagnostic::read_line(std::path::Path::new(file), line as u64);
    code.is_some_and(|c| on_disk.is_some_and(|d| d.trim() == c.trim()))
}

/// With the traceback's user files on disk, the proved origin of the bad value, traced
/// from the user's innermost frame (or from the asserting op's call found before the line
/// where an asynchronous error surfaced).
fn origin_from_source(diagnosis: &mut Diagnosis, tb: &Traceback) {
    let mut frames: Vec<assertscope_flow::slice::Frame> = frames::innermost_first(tb)
        .into_iter()
        .filter(|f| frames::origin(&f.file) == frames::Origin::User)
        .filter_map(|f| {
            let line = usize::try_from(f.line?).ok()?;
            Some(assertscope_flow::slice::Frame {
                file: f.file.clone().into(),
                line,
                function: f.function.clone(),
                columns: f.carets.filter(|_| same_code(&f.file, line, f.code.as_deref())),
            })
        })
        .collect();
    let Some(first) = frames.first_mut() else { return };
    if !first.file.is_file() {
        return;
    }
    if let Some(call) = diagnosis.origin.iter().find(|o| o.role == "call").and_then(|o| o.line) {
        first.line = call as usize;
        first.columns = None;
    }
    crate::origin::trace(diagnosis, None, &frames);
}

/// The error itself as evidence, and what the assertion's site and a synchronous
/// traceback say about the op.
fn record_error(
    kb: &'static KnowledgeBase,
    root: &Failure<'_>,
    surfaced: Option<&Traceback>,
    draft: &mut Draft,
) {
    let Some(group) = root.assertion else {
        if !root.text.is_empty() {
            draft.evidence.push(Evidence {
                kind: evidence_kind(root).into(),
                text: root.text.clone(),
                source_line: Some(root.at.1),
            });
        }
        if (root.strength == Strength::StickyAssert && draft.cause_id != "cascade") || root.tolerant {
            draft.confidence = Confidence::Medium;
        }
        return;
    };
    draft.evidence.push(Evidence {
        kind: if group.from_dsa_report { "dsa-report".into() } else { "assert".into() },
        text: if group.count > 1 {
            format!("{} (printed by {} GPU threads)", root.text, group.count)
        } else {
            root.text.clone()
        },
        source_line: Some(group.first_log_line),
    });
    let a = &group.assertion;
    let Some(site) = kb.match_assert(&a.file, &a.kernel, &a.condition, a.message.as_deref()) else { return };
    if !site.confirmed {
        draft.confidence = Confidence::Medium;
    }
    // A synchronous traceback (CUDA_LAUNCH_BLOCKING=1) shows which op it was, if that op
    // can reach the kernel that asserted (PyTorch before 1.8 printed no asynchronous
    // warning at all, so a traceback without one may still be a later call).
    let Some(tb) = surfaced else { return };
    if tb.innermost().exception.as_ref().is_some_and(is_synchronous) {
        if let Some((frame_op, frame_cause)) = bad_value_op_in_frames(kb, tb) {
            if site_reaches(site.site, &frame_op) {
                draft.op = Some(frame_op);
                draft.cause_id = frame_cause;
            }
        }
    }
}

/// The user's frame of the traceback, noting when it is only where an asynchronous error
/// surfaced.
fn locate(kb: &KnowledgeBase, root: &Failure<'_>, tb: &Traceback, draft: &mut Draft) -> Option<Location> {
    if let Some(stated) = &root.stated_location {
        return Some(stated.clone());
    }
    let frame = frames::user_frame(tb)?;
    let location = location_of(frame);
    let asynchronous = tb.innermost().exception.as_ref().is_some_and(|e| !is_synchronous(e));
    let surfaced_only = asynchronous
        && matches!(root.strength, Strength::Assertion | Strength::StickyAssert | Strength::Cascade);
    if surfaced_only {
        let at = format!("{}:{}", frame.file, frame.line.map_or("?".into(), |l| l.to_string()));
        let what =
            draft.op.as_deref().map_or("the kernel that asserted".to_string(), |o| format!("the {o} call"));
        draft.notes.push(format!(
            "CUDA reports errors asynchronously: {at} is where the error surfaced, not where it happened. Look at {what} that runs before this line."
        ));
        draft.evidence.push(Evidence {
            kind: "surfaced".into(),
            text: format!("{at}{}", frame.code.as_deref().map_or(String::new(), |c| format!(": {c}"))),
            source_line: Some(frame.log_line),
        });
        let before = origin::call_before(kb, &frame.file, frame.line, draft.op.as_deref(), &draft.cause_id);
        draft.origin.extend(before);
    }
    Some(location)
}

/// What the rest of the log says: divergence before the error, and sizes the script
/// printed (reported under their own names, as stated evidence, never as the error's).
fn read_rest_of_log(scans: &[LogScan], key: StreamKey, root: &Failure<'_>, draft: &mut Draft) {
    let stream_rank = key.rank();
    let before = root.at.1;
    let divergence = scans.iter().flat_map(|s| s.divergence.iter()).find(|d| {
        (d.rank == stream_rank || d.rank.is_none()) && (d.log_line <= before || root.assertion.is_some())
    });
    if let Some(d) = divergence {
        let range_check = draft.cause_id == "bce-input-range"
            && root.hint.as_deref().is_none_or(|h| !h.contains("target"))
            && !root.text.contains("elements of target");
        if range_check {
            draft.cause_id = "nan-inf".into();
            draft.values.insert("metric".into(), d.metric.clone().into());
            draft.values.insert("metric_value".into(), d.value.clone().into());
            draft.values.insert("metric_line".into(), d.log_line.into());
        }
        if matches!(draft.cause_id.as_str(), "nan-inf" | "invalid-probabilities" | "bce-input-range") {
            draft.evidence.push(Evidence {
                kind: "divergence".into(),
                text: d.text.clone(),
                source_line: Some(d.log_line),
            });
        }
    }
    values::from_stated_sizes(
        &draft.cause_id,
        &scans[root.at.0],
        before,
        &mut draft.values,
        &mut draft.evidence,
    );
}

/// A bounds check in code that torch.compile generated (Inductor's C++ or Triton kernels):
/// which family of op it guards, from the kernel's name or from a table size the log
/// states to be exactly the bound.
fn compiled_code(scan: &LogScan, root: &Failure<'_>, draft: &mut Draft) {
    let generated = root.text.contains("index out of bounds: 0 <= tmp")
        || root.assertion.is_some_and(|g| g.assertion.condition.starts_with("index out of bounds: 0 <= tmp"));
    if !generated {
        return;
    }
    let text = root.assertion.map_or(root.text.as_str(), |g| g.assertion.kernel.as_str());
    let kernel_says_embedding = root.text.contains("embedding") || text.contains("embedding");
    let bound = draft.values.get("bound").and_then(|b| {
        b.as_str().map(|s| s.trim_end_matches('L').to_string()).or_else(|| b.as_i64().map(|n| n.to_string()))
    });
    let table_of_that_size = bound.as_deref().is_some_and(|b| {
        scan.sizes.iter().any(|s| {
            matches!(s.key, "vocab_size" | "num_embeddings" | "max_position_embeddings")
                && s.value.to_string() == b
        })
    });
    let embedding = kernel_says_embedding
        || table_of_that_size
        || draft.op.as_deref() == Some("embedding") && root.assertion.is_some();
    let (cause, family) = if embedding {
        ("embedding-index-out-of-range", "embedding")
    } else {
        ("index-out-of-bounds", "index")
    };
    draft.cause_id = cause.into();
    draft.op = Some(family.into());
    if let Some(b) = &bound {
        if let Ok(n) = b.parse::<i64>() {
            draft.values.insert("bound".into(), n.into());
        }
    }
    draft.values.insert("compiled".into(), "torch.compile (Inductor)".into());
    draft.title = Some(format!(
        "index out of range in code generated by torch.compile ({}{})",
        if embedding { "an embedding lookup" } else { "an indexing op" },
        bound.map_or(String::new(), |b| format!(", bound {b}"))
    ));
}

/// The diagnosis in words: title, explanation (most specific first) and fix.
fn write_up(
    kb: &'static KnowledgeBase,
    root: &Failure<'_>,
    draft: Draft,
    location: Option<Location>,
    rank: Option<u32>,
) -> Diagnosis {
    let Draft { cause_id, op, values, evidence, notes, confidence, title, hint, origin } = draft;
    let cause = kb.expect_cause(&cause_id);
    // The fix for this very case, when the values show which it is, replaces the cause's
    // general one: one piece of advice; and the usual sources are not listed beside it.
    let specific = values::hints(kb, &cause_id, &values).into_iter().next();
    let value = values::offending_value(&values);
    let explained = match specific {
        Some(_) => cause.explanation_with(value.as_deref()),
        None => cause.explanation_and_sources(value.as_deref()),
    };
    let mut paragraphs: Vec<&str> = notes.iter().map(String::as_str).collect();
    paragraphs.extend(hint.as_deref());
    paragraphs.push(&explained);
    let explanation = paragraphs.join("\n\n");
    let mut fix = specific.unwrap_or_else(|| cause.fix.clone());
    if root.strength == Strength::CutUnknown {
        fix = "The log stops before the error message: paste or run again to get the whole error (its last line names the exception), then explain it again. The frame shown is where your code was when it failed.".to_string();
    } else if cause_id == "none" {
        fix = format!(
            "The run failed with a plain Python error, not a tensor or CUDA error: {}. {}",
            root.text, cause.fix
        );
    }
    let cut_title = (root.strength == Strength::CutUnknown)
        .then(|| "the log stops before the error message; its cause is not in the log".to_string());
    let title = title.or(cut_title).unwrap_or_else(|| match (cause_id.as_str(), &op) {
        ("none", _) => format!("{}: {}", cause.title, root.text),
        ("distributed-peer-failure", Some(op)) => format!("{} (blocked in {op})", cause.title),
        ("cascade", Some(op)) => format!("{} (it surfaced in {op})", cause.title),
        (_, Some(op)) => format!("{} in {op}", cause.title),
        (_, None) => cause.title.clone(),
    });
    Diagnosis {
        cause: cause_id,
        title,
        confidence,
        op,
        location,
        rank,
        evidence,
        values,
        explanation,
        fix,
        checklist_step: cause.checklist_step(),
        origin,
        origin_end: None,
        dataset_indices: None,
    }
}

fn evidence_kind(f: &Failure<'_>) -> &'static str {
    match f.strength {
        Strength::Guard => "guard",
        Strength::Peer => "peer",
        Strength::Cascade => "follow-on",
        Strength::CutTraceback | Strength::CutUnknown => "innermost-frame",
        _ if f.traceback.is_some() => "exception",
        _ => "error",
    }
}

/// For a failure without its own traceback: the traceback of its stream that shows where
/// it surfaced (an assert error or follow-on), else a faulthandler dump of the thread that
/// was blocked, else any traceback with a user frame.
fn locating_traceback<'a>(stream: &Stream<'a>, root: &Failure<'a>) -> Option<(usize, &'a Traceback)> {
    let with_user = |tb: &&Traceback| frames::user_frame(tb).is_some();
    if root.assertion.is_some() {
        if let Some(&(si, tb)) =
            stream.tracebacks.iter().find(|(_, tb)| shows_assert_error(tb) && with_user(tb))
        {
            return Some((si, tb));
        }
    }
    if root.strength == Strength::Peer {
        let mut dumps =
            stream.tracebacks.iter().filter(|(_, tb)| tb.style == Style::Faulthandler && with_user(tb));
        if let Some(&(si, tb)) = dumps.clone().find(|(_, tb)| tb.current_thread).or_else(|| dumps.next_back())
        {
            return Some((si, tb));
        }
    }
    stream.tracebacks.iter().find(|(_, tb)| with_user(tb) && tb.style != Style::Faulthandler).copied()
}

fn location_of(frame: &Frame) -> Location {
    Location {
        file: frame.file.clone(),
        line: frame.line,
        function: frame.function.clone(),
        code: frame
            .code
            .clone()
            .or_else(|| source_line(&frame.file, frame.line).map(|l| l.trim().to_string())),
    }
}

/// The line of a source file that exists on this machine, as written (indentation kept).
pub fn source_line(file: &str, line: Option<u64>) -> Option<String> {
    crate::diagnostic::read_line(std::path::Path::new(file), line?).map(|l| l.trim_end().to_string())
}

fn secondary(
    streams: &BTreeMap<StreamKey, Stream<'_>>,
    root_key: StreamKey,
    root: &Failure<'_>,
    scans: &[LogScan],
) -> Vec<Secondary> {
    let mut out: Vec<Secondary> = Vec::new();
    let mut push = |s: Secondary| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    // On the failing rank: later CUDA library errors that met the broken context.
    for f in &streams[&root_key].failures {
        if f.strength == Strength::Cascade
            && !std::ptr::eq(f, root)
            && root.cause.as_deref() != Some("cascade")
        {
            let meaning = f.followon.map_or("a consequence of the first failure", |fo| fo.meaning.as_str());
            push(Secondary { cause: "cascade".into(), text: format!("{} ({meaning})", located(f, scans)) });
        }
    }
    // The NaN that an invalid-probabilities error only noticed.
    if root.cause.as_deref() == Some("invalid-probabilities") {
        let rank = root_key.rank();
        if let Some(d) =
            scans.iter().flat_map(|s| s.divergence.iter()).find(|d| d.rank == rank || d.rank.is_none())
        {
            push(Secondary {
                cause: "nan-inf".into(),
                text: format!(
                    "line {}: {} = {} before the sampling failed: {}",
                    d.log_line, d.metric, d.value, d.text
                ),
            });
        }
    }
    // Other ranks: those that only waited, and those that failed the same way.
    let ranked = streams.keys().any(|k| matches!(k, StreamKey::Rank(_)));
    for (key, stream) in streams {
        if *key == root_key {
            continue;
        }
        let Some(f) = stream.failures.iter().min_by_key(|f| (f.strength, f.at)) else { continue };
        // A cut traceback of another stream says nothing of what happened there.
        if f.strength == Strength::CutUnknown {
            continue;
        }
        // Unprefixed teardown lines of a job whose ranks are known add nothing.
        if ranked && matches!(key, StreamKey::Source(_)) && f.strength >= Strength::Peer {
            continue;
        }
        let who = rank_name(*key, scans);
        if f.strength == Strength::Peer || (f.strength >= Strength::Cascade && root_key.rank().is_some()) {
            // Its first sentence says what it met; the rest of a collective's message
            // ("typically caused by a remote worker crashing") is what this line says.
            let text = short(first_sentence(&f.text), 160);
            push(Secondary {
                cause: "distributed-peer-failure".into(),
                text: format!("{who} only waited for {}: {text}", rank_name(root_key, scans)),
            });
        } else if let Some(c) = &f.cause {
            push(Secondary { cause: c.clone(), text: format!("{who} also failed: {}", short(&f.text, 240)) });
        }
    }
    out
}

fn rank_name(key: StreamKey, scans: &[LogScan]) -> String {
    match key {
        StreamKey::Rank(r) => format!("rank {r}"),
        StreamKey::Source(i) => scans[i].source.clone(),
    }
}

fn located(f: &Failure<'_>, scans: &[LogScan]) -> String {
    let where_ = match f.traceback.and_then(frames::user_frame) {
        Some(fr) => format!(" at {}:{}", fr.file, fr.line.map_or("?".into(), |l| l.to_string())),
        None => format!(" (line {} of {})", f.at.1, scans[f.at.0].source),
    };
    format!("{}{}", short(&f.text, 200), where_)
}

fn first_sentence(s: &str) -> &str {
    s.find(". ").map_or(s, |end| &s[..=end])
}

fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let cut: String = s.chars().take(max).collect();
        format!("{cut}…")
    }
}
