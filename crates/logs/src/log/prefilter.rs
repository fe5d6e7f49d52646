//! Which lines of a large mapped log reach the parser while no event is open.
//!
//! The streaming reader parses every line that holds one of the `trigger_literals`. Searching a
//! large file for all of them runs at a fraction of memory speed, because several are
//! short and common (`inf`, `nan`, `In[`, `File `). Every event the parser starts from
//! an idle state is announced by one of a few rare literals (`SEEDS`): an exception or
//! error line, an assertion, a traceback header, a C++ exception's `what():`, NCCL's
//! watchdog. So the bulk of the file is searched for the seeds only, and the full trigger
//! set is searched where it can matter:
//! - within `Reach::near` bytes of a seed, on either side: the frames of a traceback
//!   whose header was lost come before its exception line, the hints after it;
//! - in the last `Reach::tail` bytes of the file, where the crash is, and so in the
//!   whole of any file no larger than that;
//! - and everywhere for the lines that state a size or a diverging metric
//!   (`EVERYWHERE`): a diagnosis uses the last size stated before the failure and the
//!   first divergence, wherever they were printed.
//!
//! A line is parsed when it holds a trigger and lies in one of those places. The
//! definition is in bytes and lines only, independent of how the file is cut into
//! chunks; `reference_candidates` computes it naively, and the mapped reader is tested
//! and fuzzed against it.

use super::triggers::{trigger_literals, triggers};
use aho_corasick::packed;
use aho_corasick::{AhoCorasick, Input, MatchKind, Span};
use std::sync::OnceLock;

/// Literals that announce every event the parser can start from an idle state. Each
/// covers triggers of its own (`rror` covers `Error` and `error`, `ssertion` both
/// spellings of `Assertion`); a knowledge-base test checks that every known error holds
/// one of them. They are few on purpose: see `BULK`.
pub const SEEDS: &[&str] = &["rror", "xception", "ssertion", "Traceback", "what():", "Watchdog"];

/// Triggers whose lines are parsed wherever they are: stated sizes and diverging
/// metrics (see `chatter`), and Ray Train's listing of which process is which rank (see
/// `ray`), printed once at the start.
pub const EVERYWHERE: &[&str] =
    &["num_classes", "num_labels", "n_classes", "ocab", "nan", "inf", "world_rank"];

/// What the bulk search looks for to find the `EVERYWHERE` lines: each of those literals
/// holds one of these (fewer literals, a faster search); a hit is confirmed on its line.
pub const EVERYWHERE_HINTS: &[&str] = &["_classes", "_labels", "ocab", "nan", "inf", "world_rank"];

/// `SEEDS` and `EVERYWHERE_HINTS` in the order the bulk search is given them. Teddy, the
/// SIMD search, has eight buckets and puts literal `i` in bucket `7 - i % 8`; a position is
/// checked when its first three bytes match a bucket's nibbles. Alone in a bucket a literal
/// is checked only where its first three bytes are; two literals in one bucket are checked
/// also where the bytes of one mix with those of the other. So literals `i` and `i + 8`,
/// which share a bucket, are chosen to mix into rare text (`_classes`/`_labels` share their
/// first byte). Given as `SEEDS` then `EVERYWHERE_HINTS`, most of explain's time went to
/// checking such false hits (`perf record`); in this order explain reads a log at 1.06-1.09x
/// ripgrep's throughput on its four literals (bench/explain/throughput.py, 0.86 GB).
pub const BULK: [&str; 12] = [
    "_classes",
    "Traceback",
    "what():",
    "nan",
    "rror",
    "xception",
    "ssertion",
    "ocab", // one bucket each,
    "_labels",
    "Watchdog",
    "world_rank",
    "inf", // then beside the first four
];

/// How far from a seed, and how far from the end of the file, the full trigger set is
/// searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reach {
    pub near: usize,
    pub tail: usize,
}

impl Reach {
    pub const DEFAULT: Reach = Reach { near: 64 << 10, tail: 4 << 20 };
}

/// The searchers behind the prefilter, built once.
pub struct Prefilter {
    bulk: LiteralSearch,
    /// Whether `BULK[i]` is a seed (else an everywhere hint).
    is_seed: [bool; BULK.len()],
    longest: usize,
}

/// Where a literal of the first search was found, and of which kind.
#[derive(Debug, Clone, Copy)]
pub enum Found {
    Seed(usize),
    /// An `EVERYWHERE_HINTS` literal: its line is passed if it holds an `EVERYWHERE` one.
    Everywhere(usize),
}

impl Prefilter {
    pub fn get() -> &'static Prefilter {
        static P: OnceLock<Prefilter> = OnceLock::new();
        P.get_or_init(|| Prefilter {
            bulk: LiteralSearch::new(&BULK),
            is_seed: BULK.map(|literal| SEEDS.contains(&literal)),
            longest: BULK.iter().map(|l| l.len()).max().unwrap_or(1),
        })
    }

    /// Whether a line holds one of the `EVERYWHERE` literals.
    pub fn states_everywhere(line: &[u8]) -> bool {
        EVERYWHERE.iter().any(|l| memchr::memmem::find(line, l.as_bytes()).is_some())
    }

    /// Every position in `[from, to)` where a seed or an everywhere hint starts
    /// (overlapping occurrences included, so the result does not depend on `from`).
    pub fn find_all(&self, bytes: &[u8], from: usize, to: usize, out: &mut Vec<Found>) {
        let end = (to + self.longest - 1).min(bytes.len());
        let mut at = from;
        while at < to {
            let Some((start, pattern)) = self.bulk.find(bytes, at, end) else { break };
            if start >= to {
                break;
            }
            out.push(if self.is_seed[pattern] { Found::Seed(start) } else { Found::Everywhere(start) });
            at = start + 1;
        }
    }

    /// Start of every line in `[from, to)` (which begins and ends on line boundaries)
    /// holding a trigger.
    pub fn trigger_lines(&self, bytes: &[u8], from: usize, to: usize, out: &mut Vec<usize>) {
        let triggers = triggers();
        let mut at = from;
        while at < to {
            let Some(m) = triggers.find(Input::new(bytes).span(at..to)) else { break };
            let line_start = memchr::memrchr(b'\n', &bytes[at..m.start()]).map_or(at, |i| at + i + 1);
            out.push(line_start);
            at = memchr::memchr(b'\n', &bytes[m.start()..to]).map_or(to, |i| m.start() + i + 1);
        }
    }
}

/// Teddy (SIMD) where the CPU has it, Aho-Corasick elsewhere.
enum LiteralSearch {
    Packed(packed::Searcher),
    Automaton(AhoCorasick),
}

impl LiteralSearch {
    fn new(literals: &[&str]) -> LiteralSearch {
        let packed = packed::Config::new()
            .match_kind(packed::MatchKind::LeftmostFirst)
            .builder()
            .extend(literals)
            .build();
        match packed {
            Some(searcher) => LiteralSearch::Packed(searcher),
            None => LiteralSearch::Automaton(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostFirst)
                    .build(literals)
                    .expect("prefilter literals build an automaton"),
            ),
        }
    }

    /// The leftmost literal starting at or after `from` and ending by `to`: (start, pattern).
    fn find(&self, bytes: &[u8], from: usize, to: usize) -> Option<(usize, usize)> {
        match self {
            LiteralSearch::Packed(s) => {
                s.find_in(bytes, Span::from(from..to)).map(|m| (m.start(), m.pattern().as_usize()))
            }
            LiteralSearch::Automaton(ac) => {
                ac.find(Input::new(bytes).span(from..to)).map(|m| (m.start(), m.pattern().as_usize()))
            }
        }
    }
}

/// The lines the prefilter passes, computed the plain way: (line start, line number).
/// The mapped reader must give exactly these whatever its chunking.
pub fn reference_candidates(bytes: &[u8], reach: Reach) -> Vec<(usize, u64)> {
    let mut seeds = Vec::new();
    let mut everywhere = Vec::new();
    let hits = |literal: &str, out: &mut Vec<usize>| {
        let finder = memchr::memmem::Finder::new(literal.as_bytes());
        let mut at = 0;
        while let Some(i) = finder.find(&bytes[at..]) {
            out.push(at + i);
            at += i + 1;
        }
    };
    for literal in SEEDS {
        hits(literal, &mut seeds);
    }
    for literal in EVERYWHERE {
        hits(literal, &mut everywhere);
    }
    seeds.sort_unstable();
    everywhere.sort_unstable();
    // (`EVERYWHERE_HINTS` only speed up the search for these; a test checks they cover them.)
    let any_in = |sorted: &[usize], lo: usize, hi: usize| {
        let i = sorted.partition_point(|&m| m < lo);
        sorted.get(i).is_some_and(|&m| m <= hi)
    };
    let len = bytes.len();
    let mut out = Vec::new();
    let mut start = 0;
    let mut number = 1;
    while start < len {
        // The newline ending the line, or the end of the file for a last line without one.
        let newline = memchr::memchr(b'\n', &bytes[start..]).map_or(len, |i| start + i);
        let line = &bytes[start..newline];
        let has_trigger =
            trigger_literals().iter().any(|t| memchr::memmem::find(line, t.as_bytes()).is_some());
        let in_tail = reach.tail > 0 && newline + reach.tail >= len;
        let near_seed = any_in(&seeds, start.saturating_sub(reach.near), newline + reach.near);
        let stated = any_in(&everywhere, start, newline);
        if has_trigger && (in_tail || near_seed || stated) {
            out.push((start, number));
        }
        start = newline + 1;
        number += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bulk_search_looks_for_the_seeds_and_the_hints_alone() {
        let mut bulk = BULK.to_vec();
        let mut both: Vec<&str> = SEEDS.iter().chain(EVERYWHERE_HINTS).copied().collect();
        bulk.sort_unstable();
        both.sort_unstable();
        assert_eq!(bulk, both);
    }

    #[test]
    fn every_everywhere_literal_holds_a_hint() {
        for literal in EVERYWHERE {
            assert!(EVERYWHERE_HINTS.iter().any(|h| literal.contains(h)), "{literal}");
        }
    }

    #[test]
    fn a_hint_on_a_line_without_a_stated_literal_passes_nothing() {
        let text = b"train_labels loaded\nnum_labels = 3\n";
        let lines: Vec<u64> =
            reference_candidates(text, Reach { near: 0, tail: 0 }).into_iter().map(|(_, n)| n).collect();
        assert_eq!(lines, vec![2]);
    }
}
