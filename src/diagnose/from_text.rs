//! Lines of error text as failures: an exception, an error line, a kernel assertion, by
//! the knowledge base's texts (exact, or the stable part of a damaged paste).

use super::failure::{Failure, Strength};
use super::{guard, values};
use crate::kb::{KnowledgeBase, Role};
use crate::log::traceback::ExceptionText;
use crate::log::AssertionGroup;
use serde_json::Map;

pub(super) fn classify_exception<'a>(
    kb: &'static KnowledgeBase,
    si: usize,
    exc: &ExceptionText,
) -> Option<Failure<'a>> {
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
pub(super) fn name_failed_kernel<'t>(
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
pub(super) const MESSAGE_LINES_JOINED: usize = 3;

pub(super) fn full_first_line(exc: &ExceptionText) -> String {
    match &exc.type_name {
        Some(t) if exc.message.is_empty() => t.clone(),
        Some(t) => format!("{t}: {}", exc.message),
        None => exc.message.clone(),
    }
}

/// Classifies one line of error text by the knowledge base.
pub(super) fn classify_text<'a>(
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
pub(super) fn classify_damaged_text<'a>(
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

pub(super) fn followon_failure<'a>(
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

pub(super) fn message_failure<'a>(
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

pub(super) fn classify_error_line<'a>(
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

pub(super) fn assertion_failure<'a>(
    kb: &'static KnowledgeBase,
    si: usize,
    group: &'a AssertionGroup,
) -> Failure<'a> {
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

pub(super) fn assertion_text(group: &AssertionGroup) -> String {
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

pub(super) fn collective_op(text: &str) -> Option<String> {
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

pub(super) fn number_after(text: &str, key: &str) -> Option<i64> {
    let i = text.find(key)? + key.len();
    text[i..].chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse().ok()
}
