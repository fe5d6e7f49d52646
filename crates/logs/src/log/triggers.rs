//! The literals that make a line worth parsing, and their automaton.

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use std::sync::OnceLock;

/// Literals that make a line worth parsing. Every example in the knowledge base
/// contains one of them (a test checks it).
pub const TRIGGERS: &[&str] = &[
    "Assertion",
    "assertion",
    "Traceback",
    "File ",
    "Cell In",
    "In[",
    "ipython-input",
    "&quot;",
    "“",
    "(most recent call first)",
    "Error",
    "error",
    "Exception",
    "exception",
    "terminate called",
    "what():",
    "index out of bounds",
    "Watchdog",
    "Fatal Python",
    "by peer",
    "device-side",
    // A kernel's source file: its assertion line in any translation.
    ".cu",
    "asynchronously",
    "CUDA_LAUNCH_BLOCKING",
    "CUBLAS_STATUS",
    "CUDNN_STATUS",
    "unable to find an engine",
    "out of memory",
    "Socket Timeout",
    "timed out",
    "closing signal",
    "CUDA_LOG_FILE",
    "During handling",
    "The above exception",
    "num_classes",
    "num_labels",
    "n_classes",
    "ocab",
    "nan",
    "inf",
    "world_rank",
    "worker processes:",
];

/// Every literal that makes a line worth parsing: the `TRIGGERS`, and the literal of each
/// message the knowledge base knows, so that a message pasted without its exception type
/// (`I had the same problem: Expected all tensors to be on the same device, …`) is read.
pub fn trigger_literals() -> &'static [String] {
    static LITERALS: OnceLock<Vec<String>> = OnceLock::new();
    LITERALS.get_or_init(|| {
        let kb = crate::kb::KnowledgeBase::get();
        let mut literals: Vec<String> = TRIGGERS.iter().map(|t| t.to_string()).collect();
        for message in &kb.messages {
            if !literals.iter().any(|l| message.literal.contains(l.as_str())) {
                literals.push(message.literal.clone());
            }
        }
        literals
    })
}

pub(crate) fn triggers() -> &'static AhoCorasick {
    static AC: OnceLock<AhoCorasick> = OnceLock::new();
    AC.get_or_init(|| {
        AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .kind(Some(AhoCorasickKind::DFA))
            .build(trigger_literals())
            .expect("trigger literals build an automaton")
    })
}
