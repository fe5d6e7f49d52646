//! The machine-readable diagnosis: the `assertscope.diagnosis/1` JSON contract that
//! `explain --json`, `run --json` and `check --json` print, and that the guard writes.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub const SCHEMA: &str = "assertscope.diagnosis/1";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Report {
    pub schema: String,
    pub diagnoses: Vec<Diagnosis>,
    pub secondary: Vec<Secondary>,
}

impl Default for Report {
    fn default() -> Self {
        Report { schema: SCHEMA.to_string(), diagnoses: Vec::new(), secondary: Vec::new() }
    }
}

impl Report {
    /// The root cause: the first diagnosis, if any.
    pub fn root(&self) -> Option<&Diagnosis> {
        self.diagnoses.first()
    }

    /// True when the report names a real problem (anything but `none`).
    pub fn found_problem(&self) -> bool {
        self.diagnoses.iter().any(|d| d.cause != "none")
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Diagnosis {
    pub cause: String,
    pub title: String,
    pub confidence: Confidence,
    pub op: Option<String>,
    pub location: Option<Location>,
    pub rank: Option<u32>,
    #[serde(default)]
    pub evidence: Vec<Evidence>,
    /// Numbers the evidence reveals: `value`, `min`, `max`, `bound`, `bad_count`, ...
    #[serde(default)]
    pub values: Map<String, Value>,
    #[serde(default)]
    pub explanation: String,
    #[serde(default)]
    pub fix: String,
    pub checklist_step: Option<u8>,
    /// Where the bad value came from, beside `location` (where it was used): the proved
    /// steps back from the refused value to the statement that computed it (the last,
    /// role `made`), and those of the size it broke (chain `size`); for `explain`, also
    /// the call of the asserting op that ran before the line where the error surfaced.
    #[serde(default)]
    pub origin: Vec<OriginLocation>,
    /// Where the trail of `origin` stops before a `made` step, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin_end: Option<OriginEnd>,
    /// The indices of the bad samples in the DataLoader's dataset (also in
    /// `values.dataset_indices`, for readers of the older field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset_indices: Option<Vec<i64>>,
}

/// One step of an origin: a `Location` with the part it played.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct OriginLocation {
    pub file: String,
    pub line: Option<u64>,
    pub function: Option<String>,
    pub code: Option<String>,
    /// `move`, `unpack`, `read`, `store` (the value passed through), `made` (computed
    /// here), `sized` (a module built with the size the data broke), or `call` (the
    /// asserting op's call, when the error surfaced later). Guards before the proved
    /// origin wrote `data` and `module`.
    pub role: String,
    /// What the step follows: `value` (the bad values), `size` (the size they broke),
    /// `shape` or `dtype`; none for a `call`.
    #[serde(default)]
    pub chain: Option<String>,
    /// One line: what happened to the value here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// A runtime fact confirms the step: the failing call's stack ran the line, the bad
    /// value was seen on it, or a live read of what it reads holds the bad value.
    #[serde(default)]
    pub confirmed: bool,
}

/// Where an origin's trail stops before the statement that made the value.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct OriginEnd {
    pub file: String,
    pub line: Option<u64>,
    #[serde(default)]
    pub function: Option<String>,
    pub code: Option<String>,
    /// Where the trail ends and why ("traced to `self.labels` in `ReviewDataset.__init__`;
    /// not followed further").
    pub note: String,
}

impl OriginLocation {
    pub fn location(&self) -> Location {
        Location {
            file: self.file.clone(),
            line: self.line,
            function: self.function.clone(),
            code: self.code.clone(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: Option<u64>,
    pub function: Option<String>,
    pub code: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Evidence {
    pub kind: String,
    pub text: String,
    /// 1-based line number in the input the evidence was read from.
    pub source_line: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Secondary {
    pub cause: String,
    pub text: String,
}
