//! What one local module offers to the files that import it, summarised once: what each
//! model class's `forward` returns, what each function returns, the module's integer
//! constants, with the places that show it. [`crate::imports`] finds and summarises the
//! modules; [`crate::flow`] reads the summaries through a [`Resolver`].

use crate::evidence::Related;
use crate::facts::Facts;
use std::collections::HashMap;
use std::sync::Arc;

/// What one local module offers to the files that import it.
#[derive(Debug, Default)]
pub struct ModuleSummary {
    pub classes: HashMap<String, ClassSummary>,
    pub functions: HashMap<String, FunctionSummary>,
    pub int_constants: HashMap<String, i64>,
}

#[derive(Debug, Clone)]
pub struct ClassSummary {
    /// The facts of what calling an instance returns (its `forward`).
    pub output: Facts,
    /// The `return` that shows it.
    pub output_at: Option<Related>,
    /// When `forward` returns a tuple, the facts of each element.
    pub elements: Vec<Facts>,
    /// The number of outputs of its last layer, when the module fixes it.
    pub classes: Option<(i64, Related)>,
}

#[derive(Debug, Clone)]
pub struct FunctionSummary {
    pub returns: Facts,
    pub returns_at: Option<Related>,
}

/// Finds and summarises the modules a file imports.
pub trait Resolver: Sync {
    /// The module of `from <dots><module> import …`, `level` being the number of dots.
    fn module(&self, level: u32, module: &str) -> Option<Arc<ModuleSummary>>;
}

/// For source that is not a file on disk: nothing is imported.
pub struct NoImports;

impl Resolver for NoImports {
    fn module(&self, _: u32, _: &str) -> Option<Arc<ModuleSummary>> {
        None
    }
}
