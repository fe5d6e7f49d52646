//! Output: the human, rustc-style rendering and the JSON contract.

pub mod human;
pub mod json;
pub mod style;
pub mod text;
