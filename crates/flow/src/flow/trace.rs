//! The evidence chain of a fact: the way a value took from where it got the fact (a layer
//! with no sigmoid, a `one_hot`, a `.view(-1, 1)`) to where a rule found it, as secondary
//! spans ("defined here", "passed here", "returned here"). Walked only for findings.

use super::engine::{Flow, Instance, FUEL};
use crate::evidence::{Evidence, Place};
use crate::facts::Facts;
use crate::semantic::{argument, Bound, ScopeId};
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextRange};

/// The longest chain shown.
const MAX_STEPS: usize = 8;

impl<'a> Flow<'a> {
    /// How `expr` (in `scope`) came to have `want`, origin first.
    pub fn trace(&self, expr: &'a Expr, scope: ScopeId, want: Facts) -> Vec<Evidence> {
        let mut steps = Vec::new();
        let mut current = (expr, scope);
        for _ in 0..MAX_STEPS {
            match self.step(current.0, current.1, want, &mut steps) {
                Some(next) if !std::ptr::eq(next.0, current.0) => current = next,
                _ => break,
            }
        }
        steps.reverse();
        steps
    }

    fn holds(&self, expr: &'a Expr, scope: ScopeId, want: Facts) -> bool {
        self.fuel.set(FUEL);
        self.expr_facts(expr, scope, 0).has(want)
    }

    /// One step back from `expr`: the expression it has `want` from, with the step recorded.
    fn step(
        &self,
        expr: &'a Expr,
        scope: ScopeId,
        want: Facts,
        steps: &mut Vec<Evidence>,
    ) -> Option<(&'a Expr, ScopeId)> {
        let mut note =
            |range: TextRange, label: String| steps.push(Evidence { place: Place::Here(range), label });
        match expr {
            Expr::Name(name) => {
                let (s, binding) = self.sem.lookup(scope, name.id.as_str(), name.range.start())?;
                match &binding.value {
                    Bound::Value(v) => {
                        note(v.range(), format!("`{}` is assigned here", name.id));
                        Some((*v, s))
                    }
                    Bound::Param { scope: fn_scope, index, name: param, default } => {
                        let sites = self.arguments_for(*fn_scope, *index, param);
                        if let Some((arg, arg_scope)) =
                            sites.into_iter().find(|(a, s)| self.holds(a, *s, want))
                        {
                            note(arg.range(), format!("passed as `{param}` here"));
                            return Some((arg, arg_scope));
                        }
                        let default = default.filter(|d| self.holds(d, *fn_scope, want))?;
                        note(default.range(), format!("`{param}` defaults to this"));
                        Some((default, *fn_scope))
                    }
                    Bound::Element(inner, index) => match &**inner {
                        Bound::Value(Expr::Call(call)) => {
                            note(call.range(), format!("`{}` is unpacked from this", name.id));
                            for (ret, ret_scope) in self.returns_of_call(call, s, 0) {
                                if let Expr::Tuple(tuple) = ret {
                                    if let Some(elt) = tuple.elts.get(*index) {
                                        if self.holds(elt, ret_scope, want) {
                                            note(elt.range(), "returned here".to_string());
                                            return Some((elt, ret_scope));
                                        }
                                    }
                                }
                            }
                            None
                        }
                        Bound::Item(iter) => {
                            note(iter.range(), format!("`{}` comes from iterating this", name.id));
                            None
                        }
                        _ => None,
                    },
                    _ => None,
                }
            }
            Expr::Attribute(attr) => {
                let (s, Bound::Value(v)) = self.self_attr(attr, scope)? else { return None };
                note(v.range(), format!("`self.{}` is set here", attr.attr));
                Some((v, s))
            }
            Expr::Named(named) => Some((&named.value, scope)),
            Expr::Subscript(sub) => self.holds(&sub.value, scope, want).then_some((&*sub.value, scope)),
            Expr::BinOp(binop) => [&*binop.left, &*binop.right]
                .into_iter()
                .find(|e| self.holds(e, scope, want))
                .map(|e| (e, scope)),
            Expr::Call(call) => self.call_step(call, scope, want, steps),
            _ => None,
        }
    }

    fn call_step(
        &self,
        call: &'a ast::ExprCall,
        scope: ScopeId,
        want: Facts,
        steps: &mut Vec<Evidence>,
    ) -> Option<(&'a Expr, ScopeId)> {
        let mut note =
            |range: TextRange, label: String| steps.push(Evidence { place: Place::Here(range), label });
        if let Some(instance) = self.instance_at(&call.func, scope, 0) {
            return match instance {
                Instance::Local(class, ctor, _) => {
                    let class_name = self.sem.classes[class].def.name.as_str();
                    if !std::ptr::eq(ctor.func.as_ref(), call.func.as_ref()) {
                        note(ctor.range(), format!("`{}` is a `{class_name}`", self.text_of(&call.func)));
                    }
                    let forward = self.method(class, "forward")?;
                    let ret =
                        self.sem.returns.get(&forward)?.iter().find(|r| self.holds(r, forward, want))?;
                    note(ret.range(), format!("`{class_name}.forward` returns this"));
                    Some((*ret, forward))
                }
                Instance::Torch(name, ctor, ctor_scope) => {
                    if name == "Sequential" {
                        if let Some(last) = self.last_layer(ctor, ctor_scope, 0) {
                            note(last.range(), "the last layer".to_string());
                            return None;
                        }
                    }
                    note(ctor.range(), describe(want, Some(name)));
                    None
                }
                Instance::Imported(module, name) => {
                    let class = module.classes.get(name)?;
                    if let Some(at) = &class.output_at {
                        steps.push(Evidence {
                            place: Place::Elsewhere(at.clone()),
                            label: format!("`{name}.forward` returns this"),
                        });
                    }
                    None
                }
                Instance::Torchvision => None,
            };
        }
        let function = match &*call.func {
            Expr::Name(name) if name.id.as_str() == "self" => {
                self.sem.class_of(scope).and_then(|c| self.method(c, "forward"))
            }
            Expr::Name(name) => self.sem.function_called(scope, name.id.as_str(), name.range.start()),
            Expr::Attribute(attr) => self.method_called(attr, scope, 0),
            _ => None,
        };
        if let Some(function) = function {
            let ret = self.sem.returns.get(&function)?.iter().find(|r| self.holds(r, function, want))?;
            let what = self.sem.function(function).map_or("", |d| d.name.as_str());
            note(ret.range(), format!("`{what}` returns this"));
            return Some((*ret, function));
        }
        if let Expr::Name(name) = &*call.func {
            if let Some((module, function)) = self.imported(name.id.as_str()) {
                if let Some(at) = module.functions.get(function).and_then(|f| f.returns_at.clone()) {
                    steps.push(Evidence {
                        place: Place::Elsewhere(at),
                        label: format!("`{function}` returns this"),
                    });
                }
                return None;
            }
        }
        // A method of the value (`.to(device)`, `.squeeze(1)`) or a torch function of it:
        // follow the value if it already had the fact, else this call made it.
        let input = match &*call.func {
            Expr::Attribute(attr) if self.sem.api(&call.func).is_none() => Some(&*attr.value),
            _ => argument(call, "input", Some(0)),
        };
        if let Some(input) = input.filter(|i| self.holds(i, scope, want)) {
            return Some((input, scope));
        }
        note(call.range(), describe(want, None));
        None
    }

    fn text_of(&self, expr: &Expr) -> String {
        match expr {
            Expr::Name(n) => n.id.to_string(),
            Expr::Attribute(a) => match &*a.value {
                Expr::Name(base) => format!("{}.{}", base.id, a.attr),
                _ => a.attr.to_string(),
            },
            _ => "it".to_string(),
        }
    }
}

/// What the origin of a fact did.
fn describe(want: Facts, layer: Option<&str>) -> String {
    let made = if want.has(Facts::ONE_HOT) {
        "one-hot encoded here"
    } else if want.has(Facts::COLUMN) {
        "reshaped to a column [N, 1] here"
    } else if want.has(Facts::INT32) {
        "made int32 here"
    } else if want.has(Facts::SOFTMAX) {
        "softmax applied here"
    } else if want.has(Facts::LOGITS) {
        return match layer {
            Some(layer) => format!("raw output of this `{layer}`, no sigmoid/softmax"),
            None => "raw scores made here".to_string(),
        };
    } else {
        "made here"
    };
    made.to_string()
}
