//! Rendering a lint run: rustc-style text, JSON, SARIF 2.1.0 for code-scanning tools, or
//! GitHub Actions workflow commands that annotate the lines of a pull request.

mod diff;
mod github;
mod json;
mod sarif;
mod text;

pub use diff::write_diff;
pub use github::write_github;
pub use json::write_json;
pub use sarif::{help_uri, write_sarif};
pub use text::write_text;
