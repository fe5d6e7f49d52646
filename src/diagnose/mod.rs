//! From the events of one or more logs to a [`Report`]: the root cause, the user's line,
//! the values, and which other errors are only consequences.
//!
//! The rules, in order of strength: a device-side assertion line names the failing
//! kernel, whatever the traceback says; a host-side message (the CPU twin of an assert, a
//! shape or dtype check) names its cause exactly; a CUDA error with no assertion line is
//! only a consequence of an earlier failure, unless the traceback is synchronous and ends
//! inside an op that can assert; follow-on errors (cuBLAS, cuDNN, NCCL) and ranks that
//! only waited are secondary.

mod diagnosis;
mod failure;
pub mod frames;
mod from_text;
mod from_traceback;
mod guard;
pub mod inputs;
mod origin;
mod placement;
mod secondary;
mod streams;
mod values;

use diagnosis::build_diagnosis;
use failure::{Failure, Stream, StreamKey};
use from_text::{assertion_failure, classify_error_line};
use from_traceback::classify_traceback;
use secondary::secondary;
use streams::{assert_error_ranks, attribute_assertion};

use crate::guard_report::{self, GuardReport};
use crate::kb::KnowledgeBase;
use crate::log::LogScan;
use crate::report::{Report, Secondary};
use std::collections::BTreeMap;

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
