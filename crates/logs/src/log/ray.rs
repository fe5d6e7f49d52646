//! What Ray adds to the lines it streams from its workers to the driver, and what it says
//! about which worker is which rank.
//!
//! - Every worker line gets a prefix naming the process: `(RayTrainWorker pid=27133)`,
//!   `(train_fn pid=4121, ip=10.0.0.5)` (the ip only for a node other than the driver's),
//!   `(pid=4121)`, `(raylet)`, `(autoscaler +12s)`. Lines of different processes interleave,
//!   so the prefix names the stream a line belongs to.
//! - Lines printed alike by several workers are printed once, then again later as
//!   `… [repeated 2x across cluster]` (once followed by a note on deduplication).
//! - Ray Train names the ranks: it lists its worker group (`- (ip=10.0.0.5, pid=27133)
//!   world_rank=1, local_rank=1, node_rank=0`), and when workers fail it quotes each error
//!   under `[Rank 1 Error Snippet]:` (several ranks with one error: `[Rank 0,1 Error Snippet]:`).
//!
//! [`RayLines`] strips the prefix and the marker from each line and gives the rank the line
//! belongs to, when Ray said so; the workers it learnt about (rank, pid, node) are kept for
//! the diagnosis to name where the failing rank ran.

use std::collections::HashMap;

/// A Ray Train worker: its world rank, process and node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worker {
    pub rank: u32,
    pub pid: String,
    /// The node's address, when Ray printed it.
    pub node: Option<String>,
    /// The actor's name (`RayTrainWorker`), when a prefix showed it.
    pub name: Option<String>,
}

/// A line with Ray's additions taken off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RayLine<'a> {
    pub text: &'a str,
    /// The rank Ray's own words tie the line to.
    pub rank: Option<u32>,
}

/// The prefix Ray puts before a worker's line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefix<'a> {
    /// The actor or task name before `pid=` (empty for a plain `(pid=…)`).
    pub name: &'a str,
    /// The process: a pid, or a system component (`raylet`, `autoscaler +12s`, `gcs_server`).
    pub pid: &'a str,
    pub ip: Option<&'a str>,
}

/// An error snippet being read: the rank it quotes, and whether its exception line was seen.
#[derive(Debug, Clone, Copy)]
struct Snippet {
    rank: u32,
    exception_seen: bool,
}

/// Reads Ray's prefixes, markers and rank listings, line by line.
#[derive(Debug, Default)]
pub struct RayLines {
    workers: Vec<Worker>,
    /// Pid -> index in `workers`.
    by_pid: HashMap<String, usize>,
    /// The snippet each stream (a prefixed pid, or the unprefixed output) is inside.
    snippets: HashMap<Option<String>, Snippet>,
}

impl RayLines {
    /// The line without Ray's prefix and repeated-log marker, and its rank when known.
    pub fn read<'a>(&mut self, line: &'a str) -> RayLine<'a> {
        let (prefix, text) = match strip_prefix(line) {
            Some((p, rest)) => (Some(p), rest),
            None => (None, line),
        };
        let text = strip_repeated(text);
        if let Some(worker) = listed_worker(text) {
            self.learn(worker);
        }
        for worker in listed_in_order(text) {
            self.learn(worker);
        }
        let mut rank = None;
        if let Some(p) = prefix {
            rank = self.by_pid.get(p.pid).map(|&i| self.workers[i].rank);
            if let (Some(i), Some(ip)) = (self.by_pid.get(p.pid), p.ip) {
                self.workers[*i].node.get_or_insert_with(|| ip.to_string());
            }
            if let (Some(i), false) = (self.by_pid.get(p.pid), p.name.is_empty()) {
                self.workers[*i].name.get_or_insert_with(|| p.name.to_string());
            }
        }
        let stream = prefix.map(|p| p.pid.to_string());
        if let Some(snippet_rank) = self.in_snippet(stream, text) {
            rank = Some(snippet_rank);
        }
        RayLine { text, rank }
    }

    /// The Ray Train workers named so far.
    pub fn workers(&self) -> &[Worker] {
        &self.workers
    }

    pub fn into_workers(self) -> Vec<Worker> {
        self.workers
    }

    fn learn(&mut self, worker: Worker) {
        match self.by_pid.get(&worker.pid) {
            Some(&i) => self.workers[i] = worker,
            None => {
                self.by_pid.insert(worker.pid.clone(), self.workers.len());
                self.workers.push(worker);
            }
        }
    }

    /// The rank of the error snippet this line belongs to, following a snippet from its
    /// header through its traceback to the exception line (and the lines indented under it).
    fn in_snippet(&mut self, stream: Option<String>, text: &str) -> Option<u32> {
        if let Some(rank) = snippet_header(text) {
            self.snippets.insert(stream, Snippet { rank, exception_seen: false });
            return Some(rank);
        }
        if self.snippets.is_empty() {
            return None;
        }
        let snippet = self.snippets.get_mut(&stream)?;
        let trimmed = text.trim_start();
        let continues = text.is_empty()
            || text.len() != trimmed.len()
            || trimmed.starts_with("Traceback (most recent call last)");
        if trimmed.starts_with("During handling of the above exception")
            || trimmed.starts_with("The above exception was the direct cause")
        {
            snippet.exception_seen = false;
            return Some(snippet.rank);
        }
        if continues {
            return Some(snippet.rank);
        }
        if !snippet.exception_seen {
            snippet.exception_seen = true;
            return Some(snippet.rank);
        }
        self.snippets.remove(&stream);
        None
    }
}

/// `(RayTrainWorker pid=27133, ip=10.0.0.5) text` -> the prefix and `text`. Names may hold
/// parentheses and blanks (`MapBatches(tokenize) pid=…`), so the prefix is read from `pid=`.
pub fn strip_prefix(line: &str) -> Option<(Prefix<'_>, &str)> {
    let inner = line.strip_prefix('(')?;
    let (prefix, rest) = if let Some(at) = inner.get(..200.min(inner.len())).and_then(|h| h.find("pid=")) {
        let name = inner[..at].trim_end();
        let after = &inner[at + 4..];
        let close = after.find(')')?;
        let fields = &after[..close];
        let (pid, ip) = match fields.split_once(", ip=") {
            Some((pid, ip)) => (pid, Some(ip)),
            None => (fields, None),
        };
        if pid.is_empty() || pid.contains([' ', ',']) {
            return None;
        }
        (Prefix { name, pid, ip }, &after[close + 1..])
    } else {
        // System components: `(raylet)`, `(raylet, ip=…)`, `(autoscaler +12s)`.
        let close = inner.find(')')?;
        let fields = &inner[..close];
        let (pid, ip) = match fields.split_once(", ip=") {
            Some((pid, ip)) => (pid, Some(ip)),
            None => (fields, None),
        };
        if !(pid == "raylet" || pid.starts_with("autoscaler +")) {
            return None;
        }
        (Prefix { name: "", pid, ip }, &inner[close + 1..])
    };
    let rest = match rest.strip_prefix(' ') {
        Some(r) => r,
        None if rest.is_empty() => rest,
        None => return None,
    };
    Some((prefix, rest))
}

/// The text without a trailing ` [repeated 2x across cluster]` (and the note on
/// deduplication Ray adds to the first one).
pub fn strip_repeated(text: &str) -> &str {
    const MARK: &str = " [repeated ";
    let Some(at) = text.rfind(MARK) else { return text };
    let after = &text[at + MARK.len()..];
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && after[digits..].starts_with("x across cluster]") {
        &text[..at]
    } else {
        text
    }
}

/// `[Rank 1 Error Snippet]:`, `[Rank 0,1 Error Snippet]:`, or alone on its line `[Rank 1]`
/// (Ray 2.4x) -> the first rank.
fn snippet_header(text: &str) -> Option<u32> {
    let body = text.trim().strip_prefix("[Rank ")?;
    let ranks = body.strip_suffix(" Error Snippet]:").or_else(|| body.strip_suffix(']'))?;
    ranks.split(',').next()?.trim().parse().ok()
}

/// The workers of older Ray Train's listing, in rank order:
/// `Starting distributed worker processes: ['11499 (10.5.166.177)', '11500 (10.5.166.177)']`.
pub fn listed_in_order(text: &str) -> Vec<Worker> {
    let Some((_, list)) = text.split_once("distributed worker processes: [") else { return Vec::new() };
    let list = list.split(']').next().unwrap_or("");
    list.split(',')
        .enumerate()
        .filter_map(|(rank, item)| {
            let item = item.trim().trim_matches(['\'', '"']);
            let (pid, node) = match item.split_once(" (") {
                Some((pid, ip)) => (pid, Some(ip.trim_end_matches(')').to_string())),
                None => (item, None),
            };
            let pid = pid.trim();
            (!pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())).then(|| Worker {
                rank: rank as u32,
                pid: pid.to_string(),
                node,
                name: None,
            })
        })
        .collect()
}

/// A worker of Ray Train's listing of its worker group:
/// `- (ip=10.0.0.5, pid=27133) world_rank=1, local_rank=1, node_rank=0`, in older Ray
/// `- (node_id=…, ip=10.0.0.5, pid=27133) world_rank=1, …`.
pub fn listed_worker(text: &str) -> Option<Worker> {
    let body = text.trim_start().strip_prefix("- (")?;
    let (inside, after) = body.split_once(')')?;
    let rank = field(after, "world_rank=")?.parse().ok()?;
    let mut pid = None;
    let mut node = None;
    for part in inside.split(", ") {
        if let Some(p) = part.strip_prefix("pid=") {
            pid = Some(p.to_string());
        } else if let Some(ip) = part.strip_prefix("ip=") {
            node = Some(ip.to_string());
        }
    }
    Some(Worker { rank, pid: pid?, node, name: None })
}

/// The value after `key` up to the next `,` or blank.
fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let start = text.find(key)? + key.len();
    let value = &text[start..];
    let end = value.find([',', ' ']).unwrap_or(value.len());
    Some(&value[..end]).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_of_actors_tasks_and_components() {
        let (p, rest) =
            strip_prefix("(RayTrainWorker pid=27133) Traceback (most recent call last):").unwrap();
        assert_eq!(
            (p.name, p.pid, p.ip, rest),
            ("RayTrainWorker", "27133", None, "Traceback (most recent call last):")
        );
        let (p, rest) = strip_prefix("(train_fn pid=4121, ip=10.0.0.5)   File \"t.py\", line 3").unwrap();
        assert_eq!(
            (p.name, p.pid, p.ip, rest),
            ("train_fn", "4121", Some("10.0.0.5"), "  File \"t.py\", line 3")
        );
        let (p, _) = strip_prefix("(MapBatches(tokenize) pid=77, ip=10.1.2.3) x").unwrap();
        assert_eq!((p.name, p.pid), ("MapBatches(tokenize)", "77"));
        let (p, rest) = strip_prefix("(pid=gcs_server) E1204 boom").unwrap();
        assert_eq!((p.name, p.pid, rest), ("", "gcs_server", "E1204 boom"));
        assert_eq!(strip_prefix("(raylet, ip=10.0.0.7) killed").unwrap().0.ip, Some("10.0.0.7"));
        assert_eq!(strip_prefix("(autoscaler +12s) Tip: x").unwrap().0.pid, "autoscaler +12s");
        for plain in ["(most recent call last)", "(see above) pid=3", "(x)", "(pid=3)text", "no prefix"] {
            assert_eq!(strip_prefix(plain), None, "{plain}");
        }
    }

    #[test]
    fn repeated_markers_come_off() {
        assert_eq!(
            strip_repeated("IndexError: Target 5 is out of bounds. [repeated 2x across cluster]"),
            "IndexError: Target 5 is out of bounds."
        );
        let first = "x [repeated 3x across cluster] (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to disable log deduplication, or see https://docs.ray.io/en/master/ray-observability/user-guides/configure-logging.html#log-deduplication for more options.)";
        assert_eq!(strip_repeated(first), "x");
        assert_eq!(strip_repeated("a [repeated often]"), "a [repeated often]");
    }

    #[test]
    fn listings_name_rank_pid_and_node() {
        let w = listed_worker("- (ip=10.0.0.5, pid=27133) world_rank=1, local_rank=1, node_rank=0").unwrap();
        assert_eq!((w.rank, w.pid.as_str(), w.node.as_deref()), (1, "27133", Some("10.0.0.5")));
        let w =
            listed_worker("- (node_id=4f2c, ip=10.0.0.6, pid=811) world_rank=3, local_rank=0, node_rank=1")
                .unwrap();
        assert_eq!((w.rank, w.pid.as_str()), (3, "811"));
        assert_eq!(listed_worker("- (a) b"), None);
        let old =
            listed_in_order("Starting distributed worker processes: ['301 (10.0.0.8)', '302 (10.0.0.9)']");
        assert_eq!(
            old.iter().map(|w| (w.rank, w.pid.as_str(), w.node.as_deref())).collect::<Vec<_>>(),
            vec![(0, "301", Some("10.0.0.8")), (1, "302", Some("10.0.0.9"))]
        );
    }

    #[test]
    fn the_older_snippet_header() {
        let mut ray = RayLines::default();
        assert_eq!(ray.read("[Rank 2]").rank, Some(2));
        assert_eq!(ray.read("Traceback (most recent call last):").rank, Some(2));
        assert_eq!(ray.read("ValueError: error").rank, Some(2));
        assert_eq!(ray.read("next").rank, None);
        assert_eq!(snippet_header("[Rank 0,3 Error Snippet]:"), Some(0));
        assert_eq!(snippet_header("[rank 2]"), None);
    }

    #[test]
    fn snippets_and_prefixes_give_ranks() {
        let mut ray = RayLines::default();
        let lines = [
            (
                "(TrainController pid=9) - (ip=10.0.0.5, pid=27133) world_rank=1, local_rank=1, node_rank=0",
                None,
            ),
            ("(RayTrainWorker pid=27133) Moving model to device: cpu", Some(1)),
            ("(RayTrainWorker pid=27166) Moving model to device: cpu", None),
            ("(TrainController pid=9) [Rank 1 Error Snippet]:", Some(1)),
            ("(TrainController pid=9) Traceback (most recent call last):", Some(1)),
            ("(TrainController pid=9)   File \"t.py\", line 55, in train_loop", Some(1)),
            ("driver line in between", None),
            ("(TrainController pid=9) IndexError: Target 5 is out of bounds.", Some(1)),
            ("(TrainController pid=9) ray.train.WorkerGroupError: Training failed", None),
        ];
        for (line, rank) in lines {
            assert_eq!(ray.read(line).rank, rank, "{line}");
        }
        assert_eq!(ray.workers()[0].name.as_deref(), Some("RayTrainWorker"));
    }
}
