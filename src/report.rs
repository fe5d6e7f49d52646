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
    /// Where the bad value or the size it broke came from, beside `location` (where it
    /// was used): the data, the module, or the call of the asserting op.
    #[serde(default)]
    pub origin: Vec<OriginLocation>,
}

/// An origin location: a `Location` with the part it played.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct OriginLocation {
    pub file: String,
    pub line: Option<u64>,
    pub function: Option<String>,
    pub code: Option<String>,
    /// `data` (made the bad value), `module` (set the size it broke) or `call` (the
    /// asserting op's call, when the error surfaced later).
    pub role: String,
    /// One line: what was made or set here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
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
