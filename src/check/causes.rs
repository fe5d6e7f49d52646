//! The causes of the knowledge base (`kb/causes.toml`), parsed on their own.
//!
//! `KnowledgeBase::get()` also compiles the matchers for every kernel assert and host
//! message, about 100 ms of start-up that `check` and `scan` (which only need cause
//! titles, explanations and fixes) would otherwise pay on every run.

use crate::kb::{Cause, SOURCES};
use serde::Deserialize;
use std::sync::OnceLock;

#[derive(Deserialize)]
struct CauseFile {
    cause: Vec<Cause>,
}

fn all() -> &'static [Cause] {
    static CAUSES: OnceLock<Vec<Cause>> = OnceLock::new();
    CAUSES.get_or_init(|| {
        let text =
            SOURCES.iter().find(|(name, _)| *name == "causes.toml").map(|(_, t)| *t).unwrap_or_default();
        toml::from_str::<CauseFile>(text)
            .unwrap_or_else(|e| panic!("embedded causes.toml is invalid: {e}"))
            .cause
    })
}

/// The cause with this id, if the knowledge base has it.
pub fn cause(id: &str) -> Option<&'static Cause> {
    all().iter().find(|c| c.id == id)
}

/// The cause with this id; the ids the checks use are all in the knowledge base (a test
/// checks it), so a miss is a programming error.
pub fn expect_cause(id: &str) -> &'static Cause {
    cause(id).unwrap_or_else(|| panic!("cause {id:?} is not in the knowledge base"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_cause_the_checks_and_scan_name_exists() {
        let ids = [
            "target-out-of-range",
            "target-shape",
            "target-dtype",
            "batch-size-mismatch",
            "embedding-index-out-of-range",
            "index-out-of-bounds",
            "bce-input-range",
            "nan-inf",
            "empty-tensor",
            "batchnorm-single-sample",
            "none",
        ];
        for id in ids {
            let c = super::expect_cause(id);
            assert_eq!(crate::kb::KnowledgeBase::get().expect_cause(id).fix, c.fix);
        }
    }
}
