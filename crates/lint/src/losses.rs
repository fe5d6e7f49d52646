//! The loss calls of a module: `F.cross_entropy(x, y)`, or `criterion(x, y)` where
//! `criterion` was built from `nn.CrossEntropyLoss` (also as `self.criterion`).

use assertscope_flow::flow::{Flow, Instance};
use assertscope_flow::semantic::{argument, ScopeId, Semantic};
use ruff_python_ast::{self as ast, Expr};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossKind {
    /// Class-index targets: `cross_entropy`.
    CrossEntropy,
    /// Class-index targets on log-probabilities: `nll_loss`.
    Nll,
    /// Probabilities in `[0, 1]`: `binary_cross_entropy`.
    Bce,
}

impl LossKind {
    pub fn takes_class_indices(self) -> bool {
        matches!(self, LossKind::CrossEntropy | LossKind::Nll)
    }

    /// How the user wrote it, for messages.
    pub fn describe(self, functional: bool) -> &'static str {
        match (self, functional) {
            (LossKind::CrossEntropy, true) => "cross_entropy",
            (LossKind::CrossEntropy, false) => "CrossEntropyLoss",
            (LossKind::Nll, true) => "nll_loss",
            (LossKind::Nll, false) => "NLLLoss",
            (LossKind::Bce, true) => "binary_cross_entropy",
            (LossKind::Bce, false) => "BCELoss",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct LossCall<'a> {
    pub kind: LossKind,
    pub functional: bool,
    pub call: &'a ast::ExprCall,
    pub scope: ScopeId,
    pub input: Option<&'a Expr>,
    pub target: Option<&'a Expr>,
}

impl LossCall<'_> {
    pub fn name(&self) -> &'static str {
        self.kind.describe(self.functional)
    }
}

pub fn loss_calls<'a>(flow: &Flow<'a>) -> Vec<LossCall<'a>> {
    let sem: &'a Semantic<'a> = flow.sem;
    let mut out = Vec::new();
    for site in &sem.calls {
        let call = site.call;
        let functional = match sem.api_in(&call.func, "torch") {
            Some("cross_entropy") => Some(LossKind::CrossEntropy),
            Some("nll_loss") => Some(LossKind::Nll),
            Some("binary_cross_entropy") => Some(LossKind::Bce),
            _ => None,
        };
        let (kind, is_functional) = match functional {
            Some(kind) => (kind, true),
            None => {
                // Only calls of something that was built elsewhere: `criterion(out, y)`.
                if !matches!(&*call.func, Expr::Name(_) | Expr::Attribute(_) | Expr::Call(_)) {
                    continue;
                }
                if call.arguments.args.len() + call.arguments.keywords.len() < 2 {
                    continue;
                }
                match flow.instance(&call.func, site.scope) {
                    Some(Instance::Torch("CrossEntropyLoss", _, _)) => (LossKind::CrossEntropy, false),
                    Some(Instance::Torch("NLLLoss", _, _)) => (LossKind::Nll, false),
                    Some(Instance::Torch("BCELoss", _, _)) => (LossKind::Bce, false),
                    _ => continue,
                }
            }
        };
        out.push(LossCall {
            kind,
            functional: is_functional,
            call,
            scope: site.scope,
            input: argument(call, "input", Some(0)),
            target: argument(call, "target", Some(1)),
        });
    }
    out
}
