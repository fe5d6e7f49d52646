//! # assertscope-diag
//!
//! The one model of a finding that every part of assertscope ends in, and the one renderer
//! that draws it for people — as rustc has one `Diag` whatever emitted it.
//!
//! - [`Diagnostic`]: a severity, a code (a taxonomy cause id or a lint rule code), one line
//!   of message, spans (the primary span where the problem is, secondary spans where the
//!   value came from), `= kind: text` notes, one `= help:` line, and wrapped sections
//!   (`why:`, `fix:`). [`Severity`] orders note < warning < error.
//! - [`text`]: draws diagnostics rustc-style on annotate-snippets: gutters, carets under the
//!   span whatever the characters' display width, long lines cut around the span.
//! - [`wrap`]: the page-width wrapping of notes and sections, which never splits a code span
//!   or a bracketed group.
//!
//! Every detector owns its own record of what it found (a classified failure in a log, a
//! data check's finding, a lint violation) and turns it into a `Diagnostic` in one place.
//! The machine-readable contracts (`assertscope.diagnosis/1`, lint's JSON and SARIF) are
//! written from the detectors' records, not from this model: the model is presentation.
//!
//! ```
//! use assertscope_diag::{Diagnostic, Severity, Span};
//!
//! let d = Diagnostic::new(Severity::Error, Some("target-out-of-range"), "target 10 is out of range")
//!     .span(Span::at("train.py", Some(3)).source(Some("loss = F.cross_entropy(out, y)".into())))
//!     .help("use labels in [0, 10)");
//! let text = assertscope_diag::text::render_one(&d, false);
//! assert!(text.starts_with("error[target-out-of-range]: target 10 is out of range"));
//! assert!(text.contains("--> train.py:3"));
//! ```

mod model;
pub mod text;
pub mod wrap;

pub use model::{read_line, Diagnostic, Note, Severity, Span};
