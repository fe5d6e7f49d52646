//! Integer values a tensor can hold, for class targets: the number of classes a model's
//! output scores (its last layer's size) and the highest label a target can hold (drawn by
//! `randint`, set by `t[...] = 255`, carried through a TensorDataset and its DataLoader).

use super::engine::{Flow, Instance, FUEL};
use crate::evidence::{Evidence, Place};
use crate::semantic::{argument, int_literal, Bound, ClassInfo, ScopeId};
use ruff_python_ast::{self as ast, Expr, Operator};
use ruff_text_size::{Ranged, TextRange};

/// The highest value a target can hold, and how it gets there (origin first).
#[derive(Debug, Clone)]
pub struct Max {
    pub value: i64,
    pub evidence: Vec<Evidence>,
}

/// Methods that keep a tensor's values.
const SAME_VALUES: &[&str] = &[
    "to",
    "cuda",
    "cpu",
    "long",
    "int",
    "squeeze",
    "flatten",
    "view",
    "reshape",
    "contiguous",
    "clone",
    "detach",
];

impl<'a> Flow<'a> {
    /// How many classes the model output `expr` scores: the size of the last layer that
    /// makes it, with where that size is written.
    pub fn class_count(&self, expr: &'a Expr, scope: ScopeId) -> Option<(i64, Place)> {
        self.fuel.set(FUEL);
        self.count_at(expr, scope, 0)
    }

    /// The class count of what a local model class returns.
    pub fn class_count_of_class(&self, class: &ClassInfo<'a>) -> Option<(i64, TextRange)> {
        let id = *self.sem.class_by_name.get(class.def.name.as_str())?;
        self.fuel.set(FUEL);
        match self.forward_classes(id, 0)? {
            (n, Place::Here(range)) => Some((n, range)),
            _ => None,
        }
    }

    fn count_at(&self, expr: &'a Expr, scope: ScopeId, depth: u32) -> Option<(i64, Place)> {
        if !self.burn(depth) {
            return None;
        }
        match expr {
            Expr::Name(name) => {
                let (v, s) = self.assigned_value(name, scope)?;
                self.count_at(v, s, depth + 1)
            }
            Expr::Call(call) => {
                if let Some(("torch", "log_softmax" | "softmax")) = self.sem.api(&call.func) {
                    return self.count_at(argument(call, "input", Some(0))?, scope, depth + 1);
                }
                if let Some(instance) = self.instance_at(&call.func, scope, depth + 1) {
                    return self.instance_classes(&instance, depth + 1);
                }
                match &*call.func {
                    Expr::Attribute(attr) if matches!(attr.attr.as_str(), "log_softmax" | "softmax") => {
                        self.count_at(&attr.value, scope, depth + 1)
                    }
                    Expr::Attribute(attr)
                        if SAME_VALUES.contains(&attr.attr.as_str()) && call.arguments.is_empty() =>
                    {
                        self.count_at(&attr.value, scope, depth + 1)
                    }
                    Expr::Attribute(attr) if matches!(attr.attr.as_str(), "to" | "cuda" | "float") => {
                        self.count_at(&attr.value, scope, depth + 1)
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn instance_classes(&self, instance: &Instance<'a>, depth: u32) -> Option<(i64, Place)> {
        if !self.burn(depth) {
            return None;
        }
        match instance {
            Instance::Torch(name, ctor, ctor_scope) => {
                let size = match *name {
                    "Linear" | "LazyLinear" => argument(ctor, "out_features", Some(1)),
                    "Conv1d" | "Conv2d" | "Conv3d" => argument(ctor, "out_channels", Some(1)),
                    "Sequential" => {
                        let last = self.last_layer(ctor, *ctor_scope, depth + 1)?;
                        let inner = self.instance_at(last, *ctor_scope, depth + 1)?;
                        return self.instance_classes(&inner, depth + 1);
                    }
                    "DistributedDataParallel" | "DataParallel" => {
                        let inner =
                            self.instance_at(argument(ctor, "module", Some(0))?, *ctor_scope, depth + 1)?;
                        return self.instance_classes(&inner, depth + 1);
                    }
                    _ => None,
                }?;
                let n = self.int_at(size, *ctor_scope, depth + 1)?;
                Some((n, Place::Here(size.range())))
            }
            Instance::Local(class, _, _) => self.forward_classes(*class, depth + 1),
            Instance::Imported(module, name) => {
                let (n, at) = module.classes.get(*name)?.classes.clone()?;
                Some((n, Place::Elsewhere(at)))
            }
            Instance::Torchvision => None,
        }
    }

    /// The class count of every `return` of a local class's `forward`, when they agree.
    fn forward_classes(&self, class: crate::semantic::ClassId, depth: u32) -> Option<(i64, Place)> {
        let forward = self.method(class, "forward")?;
        let mut found: Option<(i64, Place)> = None;
        for ret in self.sem.returns.get(&forward).into_iter().flatten() {
            let count = self.count_at(ret, forward, depth + 1)?;
            if found.as_ref().is_some_and(|(n, _)| *n != count.0) {
                return None;
            }
            found = Some(count);
        }
        found
    }

    /// The highest class label `target` can hold, when the module fixes it. Stores of
    /// `ignore_index` do not count; a store of any other value that is not known makes it
    /// unknown (it may lower the labels as well as raise them).
    pub fn max_label(&self, target: &'a Expr, scope: ScopeId, ignore_index: i64) -> Option<Max> {
        self.fuel.set(FUEL);
        self.max_at(target, scope, ignore_index, 0)
    }

    fn max_at(&self, expr: &'a Expr, scope: ScopeId, ignore: i64, depth: u32) -> Option<Max> {
        if !self.burn(depth) {
            return None;
        }
        if let Some(v) = int_literal(expr) {
            return Some(Max { value: v, evidence: Vec::new() });
        }
        match expr {
            Expr::Name(name) => {
                let (s, binding) = self.sem.lookup(scope, name.id.as_str(), name.range.start())?;
                let offset = binding.offset;
                let mut max = self.bound_max(&binding.value.clone(), s, ignore, depth + 1)?;
                if let Bound::Value(v) = binding.value {
                    max.evidence.push(Evidence {
                        place: Place::Here(v.range()),
                        label: format!("`{}` holds labels up to {} here", name.id, max.value),
                    });
                }
                let stores = self.sem.item_stores.get(&(s, name.id.as_str())).into_iter().flatten();
                for store in stores.filter(|v| v.range().start() > offset) {
                    let value = self.int_at(store, s, depth + 1)?;
                    if value == ignore {
                        continue;
                    }
                    if value <= max.value {
                        return None;
                    }
                    max.value = value;
                    max.evidence.push(Evidence {
                        place: Place::Here(store.range()),
                        label: format!("set to {value} here"),
                    });
                }
                Some(max)
            }
            Expr::Call(call) => self.call_max(call, scope, ignore, depth + 1),
            Expr::BinOp(binop) => {
                let k = self.int_at(&binop.right, scope, depth + 1)?;
                let mut max = self.max_at(&binop.left, scope, ignore, depth + 1)?;
                max.value = match binop.op {
                    Operator::Add => max.value.checked_add(k)?,
                    Operator::Sub => max.value.checked_sub(k)?,
                    _ => return None,
                };
                Some(max)
            }
            _ => None,
        }
    }

    fn bound_max(&self, bound: &Bound<'a>, scope: ScopeId, ignore: i64, depth: u32) -> Option<Max> {
        match bound {
            Bound::Value(v) => self.max_at(v, scope, ignore, depth + 1),
            Bound::Element(inner, index) => {
                let (expr, expr_scope) = self.element_source(inner, *index, scope, depth + 1)?;
                self.max_at(expr, expr_scope, ignore, depth + 1)
            }
            _ => None,
        }
    }

    /// The expression element `index` of an unpacked value comes from: a tuple a local
    /// function returns, or a tensor of the TensorDataset a DataLoader iterates.
    fn element_source(
        &self,
        bound: &Bound<'a>,
        index: usize,
        scope: ScopeId,
        depth: u32,
    ) -> Option<(&'a Expr, ScopeId)> {
        if !self.burn(depth) {
            return None;
        }
        match bound {
            Bound::Value(
                Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }),
            ) => {
                if elts.iter().any(Expr::is_starred_expr) {
                    return None;
                }
                Some((elts.get(index)?, scope))
            }
            Bound::Value(Expr::Call(call)) => {
                let returns = self.returns_of_call(call, scope, depth + 1);
                let [(Expr::Tuple(tuple), ret_scope)] = &returns[..] else { return None };
                Some((tuple.elts.get(index)?, *ret_scope))
            }
            Bound::Item(iter) => {
                let (iter, iter_scope) = self.origin_at(iter, scope, depth + 1);
                let Expr::Call(call) = iter else { return None };
                if self.sem.api(&call.func) != Some(("torch", "DataLoader")) {
                    return None;
                }
                let dataset = argument(call, "dataset", Some(0))?;
                match self.instance_at(dataset, iter_scope, depth + 1)? {
                    Instance::Torch("TensorDataset", ctor, ctor_scope) => {
                        Some((ctor.arguments.args.get(index)?, ctor_scope))
                    }
                    // A local Dataset: element `index` of the one tuple its `__getitem__` returns.
                    Instance::Local(class, _, _) => {
                        let getitem = self.method(class, "__getitem__")?;
                        let returns = self.sem.returns.get(&getitem)?;
                        let [Expr::Tuple(tuple)] = &returns[..] else { return None };
                        if tuple.elts.iter().any(Expr::is_starred_expr) {
                            return None;
                        }
                        Some((tuple.elts.get(index)?, getitem))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn call_max(&self, call: &'a ast::ExprCall, scope: ScopeId, ignore: i64, depth: u32) -> Option<Max> {
        if let Some(("torch", name)) = self.sem.api(&call.func) {
            let made = |value: i64, what: String| Max {
                value,
                evidence: vec![Evidence { place: Place::Here(call.range()), label: what }],
            };
            return match name {
                "randint" => {
                    let args = &call.arguments.args;
                    // randint(high, size) or randint(low, high, size).
                    let high = match args.len() {
                        2 => argument(call, "high", Some(0)),
                        _ => argument(call, "high", Some(1)),
                    }?;
                    let high = self.int_at(high, scope, depth + 1)?;
                    let top = high.checked_sub(1)?;
                    Some(made(top, format!("draws labels up to {top} here")))
                }
                "zeros" | "zeros_like" => Some(made(0, "filled with 0 here".to_string())),
                "full" | "full_like" => {
                    let v = self.int_at(argument(call, "fill_value", Some(1))?, scope, depth + 1)?;
                    Some(made(v, format!("filled with {v} here")))
                }
                // An array made into a tensor keeps its values.
                "from_numpy" | "as_tensor" | "tensor"
                    if call.arguments.args.first().is_some_and(|a| matches!(a, Expr::Name(_))) =>
                {
                    self.max_at(&call.arguments.args[0], scope, ignore, depth + 1)
                }
                "tensor" | "as_tensor" | "LongTensor" => {
                    let Some(Expr::List(list)) = call.arguments.args.first() else { return None };
                    let values: Option<Vec<i64>> = list.elts.iter().map(int_literal).collect();
                    let v = values?.into_iter().max()?;
                    Some(made(v, format!("holds labels up to {v} here")))
                }
                _ => None,
            };
        }
        if self.sem.api_in(&call.func, "numpy") == Some("randint") {
            // numpy's randint(high) or randint(low, high, size): `high` is exclusive.
            let high = match call.arguments.args.len() {
                1 => call.arguments.args.first(),
                _ => argument(call, "high", Some(1)),
            }?;
            let top = self.int_at(high, scope, depth + 1)?.checked_sub(1)?;
            return Some(Max {
                value: top,
                evidence: vec![Evidence {
                    place: Place::Here(call.range()),
                    label: format!("draws labels up to {top} here"),
                }],
            });
        }
        match &*call.func {
            Expr::Attribute(attr) if SAME_VALUES.contains(&attr.attr.as_str()) => {
                if attr.attr.as_str() == "to"
                    && call.arguments.find_keyword("dtype").is_none()
                    && call.arguments.args.len() > 1
                {
                    return None;
                }
                self.max_at(&attr.value, scope, ignore, depth + 1)
            }
            _ => {
                let returns = self.returns_of_call(call, scope, depth + 1);
                let [(ret, ret_scope)] = &returns[..] else { return None };
                self.max_at(ret, *ret_scope, ignore, depth + 1)
            }
        }
    }

    /// How many samples a data set holds, when the module fixes it: `torch.arange(64)`, the
    /// first size of `randn(64, 8)` / `zeros((64, 1))`, and a TensorDataset of such tensors.
    pub fn sample_count(&self, dataset: &'a Expr, scope: ScopeId) -> Option<i64> {
        self.fuel.set(FUEL);
        self.samples_at(dataset, scope, 0)
    }

    fn samples_at(&self, expr: &'a Expr, scope: ScopeId, depth: u32) -> Option<i64> {
        if !self.burn(depth) {
            return None;
        }
        match expr {
            Expr::Name(name) => {
                let (v, s) = self.assigned_value(name, scope)?;
                self.samples_at(v, s, depth + 1)
            }
            Expr::Call(call) => {
                if let Some(Instance::Torch("TensorDataset", ctor, ctor_scope)) = self
                    .instance_at(&call.func, scope, depth + 1)
                    .or_else(|| self.instance_at(expr, scope, depth + 1))
                {
                    return self.samples_at(ctor.arguments.args.first()?, ctor_scope, depth + 1);
                }
                match self.sem.api(&call.func) {
                    Some(("torch", "arange")) if call.arguments.args.len() == 1 => {
                        self.int_at(&call.arguments.args[0], scope, depth + 1)
                    }
                    Some(("torch", "randn" | "rand" | "zeros" | "ones" | "empty")) => {
                        let first = match call.arguments.args.first()? {
                            Expr::Tuple(t) => t.elts.first()?,
                            Expr::List(l) => l.elts.first()?,
                            other => other,
                        };
                        self.int_at(first, scope, depth + 1)
                    }
                    Some(_) => None,
                    None => match &*call.func {
                        // Methods that keep the rows: dtype and device changes, a column.
                        Expr::Attribute(attr) => {
                            let keeps_rows = match attr.attr.as_str() {
                                "float" | "long" | "double" | "to" | "cuda" | "cpu" | "clone" => true,
                                "unsqueeze" => matches!(
                                    argument(call, "dim", Some(0)).and_then(int_literal),
                                    Some(1 | -1)
                                ),
                                "view" | "reshape" => {
                                    call.arguments.args.len() == 2
                                        && int_literal(&call.arguments.args[0]) == Some(-1)
                                        && int_literal(&call.arguments.args[1]) == Some(1)
                                }
                                _ => false,
                            };
                            if keeps_rows {
                                self.samples_at(&attr.value, scope, depth + 1)
                            } else {
                                None
                            }
                        }
                        _ => None,
                    },
                }
            }
            _ => None,
        }
    }
}
