//! Value tracing inside one module: what a tensor expression is known to hold (one-hot,
//! int32, a column `[N, 1]`, probabilities, raw logits, …), following assignments, tuple
//! unpacking, function arguments at the module's own call sites, `self.attr` set in other
//! methods, `return` values, the `forward` of modules defined in the file and the samples a
//! local `Dataset` returns to a `DataLoader` loop.

pub use crate::facts::Facts;

mod elements;
mod engine;
mod expressions;
mod instances;
mod origins;
mod trace;
mod values;
pub use engine::{Flow, Instance};
pub use values::Max;
