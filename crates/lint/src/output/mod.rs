//! A lint run for tools: JSON, SARIF 2.1.0 for code-scanning services, or GitHub Actions
//! workflow commands that annotate the lines of a pull request. (The text a person reads is
//! drawn by the binary's shared renderer.)

mod github;
mod json;
mod sarif;

pub use github::write_github;
pub use json::write_json;
pub use sarif::{help_uri, write_sarif};
