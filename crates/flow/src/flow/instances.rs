//! What object an expression holds (a torch module, a local class, an imported one), the
//! integer it holds, and what a module's output is (its last layer, a `Sequential`'s layers).

use super::engine::{Flow, Instance, MAX_CALL_SITES};
use super::expressions::PASS_THROUGH_MODULE;
use crate::facts::Facts;
use crate::semantic::{argument, int_literal, Bound, ScopeId};
use ruff_python_ast::{self as ast, Expr, Operator};

impl<'a> Flow<'a> {
    pub(super) fn instance_at(&self, expr: &'a Expr, scope: ScopeId, depth: u32) -> Option<Instance<'a>> {
        if !self.burn(depth) {
            return None;
        }
        match expr {
            Expr::Name(name) => {
                let (s, binding) = self.sem.lookup(scope, name.id.as_str(), name.range.start())?;
                match &binding.value {
                    Bound::Value(value) => self.instance_at(value, s, depth + 1),
                    Bound::Param { scope: fn_scope, index, name, default } => {
                        let sites = self.arguments_at(*fn_scope, *index, name, depth + 1);
                        let first = sites.first().copied().or(default.map(|d| (d, *fn_scope)))?;
                        self.instance_at(first.0, first.1, depth + 1)
                    }
                    _ => None,
                }
            }
            Expr::Attribute(attr) => {
                let (s, bound) = self.self_attr(attr, scope)?;
                match bound {
                    Bound::Value(value) => self.instance_at(value, s, depth + 1),
                    _ => None,
                }
            }
            Expr::Call(call) => {
                if let Some((root, last)) = self.sem.api(&call.func) {
                    return match root {
                        "torch" if last == "compile" => {
                            self.instance_at(argument(call, "model", Some(0))?, scope, depth + 1)
                        }
                        "torch" if last.starts_with(|c: char| c.is_ascii_uppercase()) => {
                            Some(Instance::Torch(last, call, scope))
                        }
                        "torchvision" => Some(Instance::Torchvision),
                        _ => match &*call.func {
                            Expr::Name(name) => {
                                let (module, imported) = self.imported(name.id.as_str())?;
                                module
                                    .classes
                                    .contains_key(imported)
                                    .then_some(Instance::Imported(module, imported))
                            }
                            _ => None,
                        },
                    };
                }
                match &*call.func {
                    Expr::Name(name) => {
                        if let Some(&class) = self.sem.class_by_name.get(name.id.as_str()) {
                            return Some(Instance::Local(class, call, scope));
                        }
                        if let Some(function) =
                            self.sem.function_called(scope, name.id.as_str(), name.range.start())
                        {
                            // `model = build_model()`: what the function returns.
                            let ret = self.sem.returns.get(&function)?.first()?;
                            return self.instance_at(ret, function, depth + 1);
                        }
                        let (module, imported) = self.imported(name.id.as_str())?;
                        module.classes.contains_key(imported).then_some(Instance::Imported(module, imported))
                    }
                    Expr::Attribute(attr) if PASS_THROUGH_MODULE.contains(&attr.attr.as_str()) => {
                        self.instance_at(&attr.value, scope, depth + 1)
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    pub(super) fn int_at(&self, expr: &'a Expr, scope: ScopeId, depth: u32) -> Option<i64> {
        if !self.burn(depth) {
            return None;
        }
        if let Some(v) = int_literal(expr) {
            return Some(v);
        }
        match expr {
            Expr::Name(name) => {
                let (s, binding) = self.sem.lookup(scope, name.id.as_str(), name.range.start())?;
                match &binding.value {
                    Bound::Value(value) => self.int_at(value, s, depth + 1),
                    // A parameter: the value every call of the module passes, and the default
                    // when some call leaves it out, all agreeing.
                    Bound::Param { scope: fn_scope, index, name: param, default } => {
                        let sites = self.arguments_at(*fn_scope, *index, param, depth + 1);
                        let callers = self.sem.function(*fn_scope).map_or(0, |def| {
                            self.sem.calls_of(def.name.as_str()).take(MAX_CALL_SITES).count()
                        });
                        let mut values = Vec::new();
                        for (arg, arg_scope) in &sites {
                            values.push(self.int_at(arg, *arg_scope, depth + 1)?);
                        }
                        if sites.len() < callers || sites.is_empty() {
                            values.push(self.int_at((*default)?, *fn_scope, depth + 1)?);
                        }
                        let first = *values.first()?;
                        values.iter().all(|v| *v == first).then_some(first)
                    }
                    _ => None,
                }
            }
            Expr::Attribute(attr) => {
                let (value, value_scope) = match self.self_attr(attr, scope) {
                    Some((s, Bound::Value(v))) => (v, s),
                    Some(_) => return None,
                    None => self.config_value_at(attr, scope, depth + 1)?,
                };
                self.int_at(value, value_scope, depth + 1)
            }
            Expr::BinOp(binop) => {
                let l = self.int_at(&binop.left, scope, depth + 1)?;
                let r = self.int_at(&binop.right, scope, depth + 1)?;
                match binop.op {
                    Operator::Add => l.checked_add(r),
                    Operator::Sub => l.checked_sub(r),
                    Operator::Mult => l.checked_mul(r),
                    Operator::FloorDiv if r != 0 => l.checked_div(r),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// What calling a module instance returns.
    pub(super) fn module_output(&self, instance: Instance<'a>, depth: u32) -> Facts {
        match instance {
            Instance::Torchvision => Facts::LOGITS,
            Instance::Torch(name, ctor, ctor_scope) => match name {
                "Linear" | "Bilinear" | "LazyLinear" | "Conv1d" | "Conv2d" | "Conv3d" | "ConvTranspose1d"
                | "ConvTranspose2d" | "ConvTranspose3d" => Facts::LOGITS,
                "Sigmoid" => Facts::PROB | Facts::NONNEG,
                "Softmax" => Facts::PROB | Facts::NONNEG | Facts::SOFTMAX,
                "LogSoftmax" => Facts::LOG_PROB,
                "Sequential" => {
                    let last = self.last_layer(ctor, ctor_scope, depth + 1);
                    match last.and_then(|l| self.instance_at(l, ctor_scope, depth + 1)) {
                        Some(inner) => self.module_output(inner, depth + 1),
                        None => Facts::NONE,
                    }
                }
                // Wrappers return what the wrapped model returns.
                "DistributedDataParallel" | "DataParallel" | "FullyShardedDataParallel" => {
                    match argument(ctor, "module", Some(0))
                        .and_then(|m| self.instance_at(m, ctor_scope, depth + 1))
                    {
                        Some(inner) => self.module_output(inner, depth + 1),
                        None => Facts::NONE,
                    }
                }
                _ => Facts::NONE,
            },
            Instance::Local(class, _, _) => {
                let Some(forward) = self.method(class, "forward") else {
                    return Facts::NONE;
                };
                let mut facts = Facts::NONE;
                for ret in self.sem.returns.get(&forward).into_iter().flatten() {
                    facts = facts | self.expr_facts(ret, forward, depth + 1);
                }
                facts
            }
            Instance::Imported(module, name) => module.classes.get(name).map_or(Facts::NONE, |c| c.output),
        }
    }

    /// The layers of `nn.Sequential(a, b, …)` or `nn.Sequential(OrderedDict([("a", a), …]))`.
    pub fn sequential_layers(&self, ctor: &'a ast::ExprCall) -> Vec<&'a Expr> {
        if let [Expr::Call(inner)] = &ctor.arguments.args[..] {
            if matches!(self.sem.api(&inner.func), Some((_, "OrderedDict"))) {
                let Some(Expr::List(ast::ExprList { elts, .. }) | Expr::Tuple(ast::ExprTuple { elts, .. })) =
                    inner.arguments.args.first()
                else {
                    return Vec::new();
                };
                return elts
                    .iter()
                    .filter_map(|e| match e {
                        Expr::Tuple(t) if t.elts.len() == 2 => Some(&t.elts[1]),
                        _ => None,
                    })
                    .collect();
            }
        }
        ctor.arguments.args.iter().take_while(|a| !a.is_starred_expr()).collect()
    }

    /// The last layer of a Sequential that computes something (not Dropout, Identity, Flatten).
    pub fn last_layer(&self, ctor: &'a ast::ExprCall, scope: ScopeId, depth: u32) -> Option<&'a Expr> {
        if ctor.arguments.args.iter().any(Expr::is_starred_expr) {
            return None;
        }
        self.sequential_layers(ctor).into_iter().rev().find(|layer| {
            !matches!(
                self.instance_at(layer, scope, depth + 1),
                Some(Instance::Torch("Dropout" | "Identity" | "Flatten" | "Dropout1d" | "Dropout2d", _, _))
            )
        })
    }
}
