//! The runtime facts a guard report carries beside its diagnosis (`runtime`), as the
//! guard gathers them in the failing process, on the failure path only. Every field is
//! optional: `explain` has none, and an older guard writes none. The protocol's words
//! for each field are in `docs/origin.md`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `version` of the runtime facts this binary reads.
pub const VERSION: u64 = 1;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Runtime {
    #[serde(default)]
    pub version: Option<u64>,
    /// Unix time the process started, in seconds.
    #[serde(default)]
    pub process_start: Option<f64>,
    /// The user frames of the failing call, innermost first.
    #[serde(default)]
    pub frames: Vec<RuntimeFrame>,
    /// The text of frame files that are not files on disk (notebook cells), by name.
    #[serde(default)]
    pub sources: BTreeMap<String, String>,
    #[serde(default)]
    pub operand: Option<RuntimeOperand>,
    #[serde(default)]
    pub dataset: Option<Dataset>,
    #[serde(default)]
    pub observed: Vec<ObservedLine>,
    #[serde(default)]
    pub live: Vec<LiveRead>,
    #[serde(default)]
    pub modules: Vec<ModuleFact>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RuntimeFrame {
    pub file: String,
    pub line: u64,
    #[serde(default)]
    pub function: Option<String>,
    /// `os.stat` of the file at failure time.
    #[serde(default)]
    pub size: Option<u64>,
    #[serde(default)]
    pub mtime_ns: Option<i128>,
    /// Local names (or container paths, `batch["labels"]`) whose value is the operand.
    #[serde(default)]
    pub holders: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RuntimeOperand {
    #[serde(default)]
    pub parameter: Option<String>,
    #[serde(default)]
    pub index: Option<usize>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Dataset {
    /// The bad samples' indices in the outermost dataset's index space.
    #[serde(default)]
    pub indices: Vec<i64>,
    #[serde(default)]
    pub batch_step: Option<u64>,
    #[serde(default)]
    pub batches_in_epoch: Option<u64>,
    #[serde(default)]
    pub loader: Option<Place>,
    /// The wrappers down to the user's class, outermost first.
    #[serde(default)]
    pub chain: Vec<DatasetLevel>,
    #[serde(default)]
    pub collate: Option<Place>,
    /// A one-line summary of the bad sample.
    #[serde(default)]
    pub sample: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Place {
    pub file: String,
    pub line: u64,
    #[serde(default)]
    pub function: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DatasetLevel {
    pub class: String,
    #[serde(default)]
    pub module: Option<String>,
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub init_line: Option<u64>,
    #[serde(default)]
    pub getitem_line: Option<u64>,
    #[serde(default)]
    pub index: Option<i64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ObservedLine {
    pub file: String,
    pub line: u64,
    #[serde(default)]
    pub function: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub value: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LiveRead {
    pub class: String,
    pub attribute: String,
    #[serde(default)]
    pub index: Option<i64>,
    #[serde(default)]
    pub value: Option<serde_json::Value>,
    #[serde(default)]
    pub holds_bad_value: bool,
    #[serde(default)]
    pub summary: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ModuleFact {
    /// What the module is to the failure: `head`, `embedding`, `positions`, `loss`…
    #[serde(default)]
    pub role: Option<String>,
    pub class: String,
    #[serde(default)]
    pub size_argument: Option<String>,
    #[serde(default)]
    pub size: Option<i64>,
    #[serde(default)]
    pub need: Option<i64>,
    /// Its construction stack, innermost first.
    #[serde(default)]
    pub sites: Vec<Place>,
    /// What its step says, when the guard knows better than "built here".
    #[serde(default)]
    pub note: Option<String>,
}
