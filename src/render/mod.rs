//! Output: the human, rustc-style rendering and the JSON contract.

pub mod human;
pub mod json;
pub mod style;
/// The renderer of the finding model lives with it, in `crates/diag`.
pub use assertscope_diag::text;
