//! Where the failing rank ran: its node and process, as Ray Train's listing of its workers
//! (in the log) or the guard's report names them. On one machine that is a detail; across
//! the nodes of a cluster it says whose logs to read.

use crate::guard_report::GuardReport;
use crate::log::LogScan;
use crate::report::Evidence;

/// The failing rank's worker, from a Ray Train listing in any of the logs.
pub fn from_logs(scans: &[LogScan], rank: Option<u32>) -> Option<Evidence> {
    let rank = rank?;
    let worker = scans.iter().flat_map(|s| s.workers.iter()).find(|w| w.rank == rank)?;
    let process = match &worker.name {
        Some(name) => format!("{name} pid {}", worker.pid),
        None => format!("pid {}", worker.pid),
    };
    let text = match &worker.node {
        Some(node) => format!("rank {rank} ran on node {node} ({process})"),
        None => format!("rank {rank} ran in {process}"),
    };
    Some(Evidence { kind: "node".into(), text, source_line: None })
}

/// The failing process's host, when the guard reported from a job of several ranks.
pub fn from_report(report: &GuardReport) -> Option<Evidence> {
    let rank = report.rank?;
    Some(Evidence {
        kind: "node".into(),
        text: format!("rank {rank} ran on node {} (pid {})", report.host, report.pid),
        source_line: None,
    })
}
