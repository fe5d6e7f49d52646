//! The root failure and the rest of its log into a [`Diagnosis`]: the user's line, the
//! error as evidence, what else the log states, the proved origin, and the words.

use super::failure::{Failure, Stream, StreamKey, Strength};
use super::from_traceback::{bad_value_op_in_frames, site_reaches};
use super::streams::{is_synchronous, shows_assert_error};
use super::{frames, origin, placement, values};
use crate::kb::KnowledgeBase;
use crate::log::traceback::{Frame, Style, Traceback};
use crate::log::LogScan;
use crate::report::{Confidence, Diagnosis, Evidence, Location, OriginLocation};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// What a diagnosis says, assembled step by step from the root failure and the log.
pub(super) struct Draft {
    pub(super) cause_id: String,
    pub(super) op: Option<String>,
    pub(super) values: Map<String, Value>,
    pub(super) evidence: Vec<Evidence>,
    /// Where-to-look notes, shown before the cause's explanation.
    pub(super) notes: Vec<String>,
    pub(super) confidence: Confidence,
    pub(super) title: Option<String>,
    pub(super) hint: Option<String>,
    /// Where the bad value or the size it broke came from (secondary locations).
    pub(super) origin: Vec<OriginLocation>,
}

pub(super) fn build_diagnosis(
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
pub(super) fn same_code(file: &str, line: usize, code: Option<&str>) -> bool {
    let on_disk = crate::diagnostic::read_line(std::path::Path::new(file), line as u64);
    code.is_some_and(|c| on_disk.is_some_and(|d| d.trim() == c.trim()))
}

/// With the traceback's user files on disk, the proved origin of the bad value, traced
/// from the user's innermost frame (or from the asserting op's call found before the line
/// where an asynchronous error surfaced).
pub(super) fn origin_from_source(diagnosis: &mut Diagnosis, tb: &Traceback) {
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
pub(super) fn record_error(
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
pub(super) fn locate(
    kb: &KnowledgeBase,
    root: &Failure<'_>,
    tb: &Traceback,
    draft: &mut Draft,
) -> Option<Location> {
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
pub(super) fn read_rest_of_log(scans: &[LogScan], key: StreamKey, root: &Failure<'_>, draft: &mut Draft) {
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
pub(super) fn compiled_code(scan: &LogScan, root: &Failure<'_>, draft: &mut Draft) {
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
pub(super) fn write_up(
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

pub(super) fn evidence_kind(f: &Failure<'_>) -> &'static str {
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
pub(super) fn locating_traceback<'a>(
    stream: &Stream<'a>,
    root: &Failure<'a>,
) -> Option<(usize, &'a Traceback)> {
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

pub(super) fn location_of(frame: &Frame) -> Location {
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
