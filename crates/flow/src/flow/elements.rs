//! Facts of one element of a value: a tuple or list unpacked, an item of iterating it, a
//! sample a local `Dataset` returns (through its `DataLoader`), a call's returns.

use super::engine::{Flow, Instance};
use super::expressions::{batched, is_logits_name};
use crate::facts::Facts;
use crate::semantic::{argument, Bound, ScopeId};
use ruff_python_ast::{self as ast, Expr};

impl<'a> Flow<'a> {
    pub(super) fn bound_facts(&self, bound: &Bound<'a>, scope: ScopeId, name: &str, depth: u32) -> Facts {
        match bound {
            Bound::Value(value) => self.expr_facts(value, scope, depth + 1),
            Bound::Element(inner, index) => self.element_facts(inner, &[*index], scope, depth + 1),
            Bound::Item(_) | Bound::Unknown => Facts::NONE,
            Bound::Param { scope: fn_scope, index, name: param, default } => {
                let sites = self.arguments_at(*fn_scope, *index, param, depth + 1);
                let mut facts = Facts::NONE;
                for (arg, arg_scope) in &sites {
                    facts = facts | self.expr_facts(arg, *arg_scope, depth + 1);
                }
                if let Some(default) = default {
                    facts = facts | self.expr_facts(default, *fn_scope, depth + 1);
                }
                if sites.is_empty() && default.is_none() && is_logits_name(name) {
                    facts = Facts::LOGITS;
                }
                facts
            }
        }
    }

    /// Facts of element `path` of an unpacked value (`a, (b, c) = …`).
    pub(super) fn element_facts(
        &self,
        bound: &Bound<'a>,
        path: &[usize],
        scope: ScopeId,
        depth: u32,
    ) -> Facts {
        if !self.burn(depth) {
            return Facts::NONE;
        }
        match bound {
            Bound::Element(inner, index) => {
                let mut full = vec![*index];
                full.extend_from_slice(path);
                self.element_facts(inner, &full, scope, depth + 1)
            }
            Bound::Value(expr) => self.expr_element(expr, path, scope, depth + 1),
            Bound::Item(iter) => self.item_element(iter, path, scope, depth + 1),
            Bound::Param { .. } | Bound::Unknown => Facts::NONE,
        }
    }

    pub(super) fn expr_element(&self, expr: &'a Expr, path: &[usize], scope: ScopeId, depth: u32) -> Facts {
        let Some((&first, rest)) = path.split_first() else { return self.expr_facts(expr, scope, depth) };
        if !self.burn(depth) {
            return Facts::NONE;
        }
        match expr {
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                if elts.iter().any(Expr::is_starred_expr) {
                    return Facts::NONE;
                }
                elts.get(first).map_or(Facts::NONE, |e| self.expr_element(e, rest, scope, depth + 1))
            }
            Expr::Name(name) => match self.sem.lookup(scope, name.id.as_str(), name.range.start()) {
                Some((s, binding)) => self.element_facts(&binding.value.clone(), path, s, depth + 1),
                None => Facts::NONE,
            },
            Expr::Call(call) => {
                if let Expr::Name(func) = &*call.func {
                    if func.id.as_str() == "next" {
                        if let Some(Expr::Call(inner)) = call.arguments.args.first() {
                            if matches!(&*inner.func, Expr::Name(n) if n.id.as_str() == "iter") {
                                if let Some(iterable) = inner.arguments.args.first() {
                                    return self.item_element(iterable, path, scope, depth + 1);
                                }
                            }
                        }
                    }
                }
                if let (Some(Instance::Imported(module, name)), [index]) =
                    (self.instance_at(&call.func, scope, depth + 1), path)
                {
                    let elements = module.classes.get(name).map(|c| c.elements.as_slice()).unwrap_or(&[]);
                    return elements.get(*index).copied().unwrap_or(Facts::NONE);
                }
                let mut facts = Facts::NONE;
                for (ret, ret_scope) in self.returns_of_call(call, scope, depth) {
                    facts = facts | self.expr_element(ret, path, ret_scope, depth + 1);
                }
                facts
            }
            _ => Facts::NONE,
        }
    }

    /// Element `path` of one item of iterating `iter` (`for x, y in loader`).
    pub(super) fn item_element(&self, iter: &'a Expr, path: &[usize], scope: ScopeId, depth: u32) -> Facts {
        let Some((&first, rest)) = path.split_first() else { return Facts::NONE };
        if !self.burn(depth) {
            return Facts::NONE;
        }
        let (iter, scope) = self.origin_at(iter, scope, depth + 1);
        let Expr::Call(call) = iter else { return Facts::NONE };
        if let Expr::Name(func) = &*call.func {
            match func.id.as_str() {
                "enumerate" if first == 1 => {
                    return call
                        .arguments
                        .args
                        .first()
                        .map_or(Facts::NONE, |a| self.item_element(a, rest, scope, depth + 1));
                }
                "zip" => {
                    return call
                        .arguments
                        .args
                        .get(first)
                        .map_or(Facts::NONE, |a| self.item_element(a, rest, scope, depth + 1));
                }
                _ => {}
            }
        }
        match self.sem.api(&call.func) {
            Some(("tqdm", _)) => call
                .arguments
                .args
                .first()
                .map_or(Facts::NONE, |a| self.item_element(a, path, scope, depth + 1)),
            Some(("torch", "DataLoader")) => match argument(call, "dataset", Some(0)) {
                Some(dataset) => batched(self.dataset_element(dataset, path, scope, depth + 1)),
                None => Facts::NONE,
            },
            _ => Facts::NONE,
        }
    }

    /// Element `path` of one sample of a dataset.
    pub(super) fn dataset_element(
        &self,
        dataset: &'a Expr,
        path: &[usize],
        scope: ScopeId,
        depth: u32,
    ) -> Facts {
        let Some((&first, rest)) = path.split_first() else { return Facts::NONE };
        match self.instance_at(dataset, scope, depth + 1) {
            Some(Instance::Torch("TensorDataset", ctor, ctor_scope)) => {
                let tensor = ctor.arguments.args.get(first);
                tensor.map_or(Facts::NONE, |t| {
                    if rest.is_empty() {
                        // A TensorDataset yields rows: a `[N, 1]` tensor gives `[1]` samples.
                        let facts = self.expr_facts(t, ctor_scope, depth + 1);
                        if facts.has(Facts::COLUMN) {
                            facts.without(Facts::COLUMN).with(Facts::SINGLETON)
                        } else {
                            facts
                        }
                    } else {
                        Facts::NONE
                    }
                })
            }
            Some(Instance::Local(class, _, _)) => {
                let Some(&getitem) = self.sem.classes[class].methods.get("__getitem__") else {
                    return Facts::NONE;
                };
                let mut facts = Facts::NONE;
                for ret in self.sem.returns.get(&getitem).into_iter().flatten() {
                    facts = facts | self.expr_element(ret, path, getitem, depth + 1);
                }
                facts
            }
            _ => Facts::NONE,
        }
    }

    /// The `return` values a call evaluates: a local function's, or a local module's `forward`.
    pub(super) fn returns_of_call(
        &self,
        call: &'a ast::ExprCall,
        scope: ScopeId,
        depth: u32,
    ) -> Vec<(&'a Expr, ScopeId)> {
        let mut out = Vec::new();
        let fn_scope = match &*call.func {
            Expr::Name(name) if !self.sem.imports.contains_key(name.id.as_str()) => {
                self.sem.function_called(scope, name.id.as_str(), name.range.start())
            }
            Expr::Attribute(attr) => self.method_called(attr, scope, depth + 1),
            _ => None,
        };
        let fn_scope = fn_scope.or_else(|| match self.instance_at(&call.func, scope, depth + 1) {
            Some(Instance::Local(class, _, _)) => self.method(class, "forward"),
            _ => None,
        });
        if let Some(f) = fn_scope {
            for ret in self.sem.returns.get(&f).into_iter().flatten() {
                out.push((*ret, f));
            }
        }
        out
    }
}
