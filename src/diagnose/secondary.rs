//! What else went wrong besides the root: follow-on errors and ranks that only waited,
//! one line each.

use super::failure::{Failure, Stream, StreamKey, Strength};
use super::frames;
use crate::log::LogScan;
use crate::report::Secondary;
use std::collections::BTreeMap;

pub(super) fn secondary(
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

pub(super) fn rank_name(key: StreamKey, scans: &[LogScan]) -> String {
    match key {
        StreamKey::Rank(r) => format!("rank {r}"),
        StreamKey::Source(i) => scans[i].source.clone(),
    }
}

pub(super) fn located(f: &Failure<'_>, scans: &[LogScan]) -> String {
    let where_ = match f.traceback.and_then(frames::user_frame) {
        Some(fr) => format!(" at {}:{}", fr.file, fr.line.map_or("?".into(), |l| l.to_string())),
        None => format!(" (line {} of {})", f.at.1, scans[f.at.0].source),
    };
    format!("{}{}", short(&f.text, 200), where_)
}

pub(super) fn first_sentence(s: &str) -> &str {
    s.find(". ").map_or(s, |end| &s[..=end])
}

pub(super) fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let cut: String = s.chars().take(max).collect();
        format!("{cut}…")
    }
}
