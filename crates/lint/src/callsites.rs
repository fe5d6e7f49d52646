//! What a parameter holds at each call of its function in this module: the argument a call
//! passes, or the default for a call that leaves it out. The flow engine answers "what may
//! this parameter hold" with the first call's argument; a rule that checks every caller
//! (a head sized by a constructor argument, `Probe(512, 10)` here and `Probe(512, 100)`
//! there) asks this module for each call, and points at the call that passes the value.

use assertscope_flow::flow::Flow;
use assertscope_flow::semantic::{argument, Bound, ScopeId, ScopeKind};
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextRange};

/// The calls followed per function: as many as the flow engine follows.
const MAX_CALLS: usize = 64;

/// The value a parameter takes at one call.
#[derive(Debug, Clone, Copy)]
pub struct ArgumentAt<'a> {
    /// The argument passed, or the parameter's default.
    pub value: &'a Expr,
    /// The scope `value` is evaluated in.
    pub scope: ScopeId,
    /// Where the value is chosen: the argument, or the call that leaves the default.
    pub at: TextRange,
    /// The call itself.
    pub call: &'a ast::ExprCall,
    pub defaulted: bool,
}

/// For a parameter binding (`Bound::Param`), its value at each call of its function: a
/// module-level function called by name, or a class's `__init__` at each `Class(…)`.
/// Calls that pass `*args` or `**kwargs` are left out: what they pass is not known.
pub fn parameter_values<'a>(flow: &Flow<'a>, param: &Bound<'a>) -> Vec<ArgumentAt<'a>> {
    let Bound::Param { scope: fn_scope, index, name, default } = *param else { return Vec::new() };
    let sem = flow.sem;
    let ScopeKind::Function { def, class } = sem.scopes[fn_scope].kind else { return Vec::new() };
    let (callee, position) = match class {
        // `self` takes the first position; only constructors are followed for methods.
        Some(class) if def.name.as_str() == "__init__" => {
            (sem.classes[class].def.name.as_str(), index.checked_sub(1))
        }
        Some(_) => return Vec::new(),
        None => (def.name.as_str(), Some(index)),
    };
    let mut out = Vec::new();
    for site in sem.calls_of(callee).take(MAX_CALLS) {
        let Expr::Name(called) = &*site.call.func else { continue };
        if class.is_none() && sem.function_called(site.scope, callee, called.range.start()) != Some(fn_scope)
        {
            continue;
        }
        let arguments = &site.call.arguments;
        if arguments.args.iter().any(|a| a.is_starred_expr())
            || arguments.keywords.iter().any(|k| k.arg.is_none())
        {
            continue;
        }
        match argument(site.call, name, position) {
            Some(value) => out.push(ArgumentAt {
                value,
                scope: site.scope,
                at: value.range(),
                call: site.call,
                defaulted: false,
            }),
            None => {
                if let Some(value) = default {
                    out.push(ArgumentAt {
                        value,
                        scope: fn_scope,
                        at: site.call.range(),
                        call: site.call,
                        defaulted: true,
                    });
                }
            }
        }
    }
    out
}

/// The parameter binding a name in `scope` refers to at `expr`, if it is one.
pub fn parameter_of<'a>(flow: &Flow<'a>, expr: &'a Expr, scope: ScopeId) -> Option<Bound<'a>> {
    let Expr::Name(name) = expr else { return None };
    let (_, binding) = flow.sem.lookup(scope, name.id.as_str(), name.range.start())?;
    matches!(binding.value, Bound::Param { .. }).then(|| binding.value.clone())
}
