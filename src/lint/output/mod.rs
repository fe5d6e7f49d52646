//! Rendering a lint run: rustc-style text, JSON, or SARIF 2.1.0 for code-scanning tools.

mod json;
mod sarif;
mod text;

pub use json::write_json;
pub use sarif::write_sarif;
pub use text::write_text;
