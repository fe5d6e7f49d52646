//! Follows values through Python training code, on Ruff's parser.
//! (Crate documentation: see README.md; it is included below.)
#![doc = include_str!("../README.md")]

mod dismantle;
pub mod evidence;
pub mod facts;
pub mod flow;
pub mod imports;
pub mod nesting;
pub mod semantic;
pub mod slice;
pub mod source;
pub mod summary;
pub mod walk;

pub use evidence::{Evidence, Place, Related};
