//! What one module defines: imports, scopes and their bindings, classes with the attributes
//! their methods set on `self`, and every call in source order. Built in one pass over the
//! AST; the value tracing in [`super::flow`] reads it.

mod builder;
mod literals;
mod model;

pub use literals::{argument, int_literal, is_zero_literal, start};
pub use model::*;

impl<'a> Semantic<'a> {
    /// The model of a module, built in one pass over its statements.
    pub fn build(suite: &'a [ruff_python_ast::Stmt]) -> Semantic<'a> {
        builder::build(suite)
    }
}
