//! Value tracing inside one module: what a tensor expression is known to hold (one-hot,
//! int32, a column `[N, 1]`, probabilities, raw logits, …), following assignments, tuple
//! unpacking, function arguments at the module's own call sites, `self.attr` set in other
//! methods, `return` values, the `forward` of modules defined in the file and the samples a
//! local `Dataset` returns to a `DataLoader` loop.

pub use crate::facts::Facts;
use crate::semantic::{argument, int_literal, Bound, ClassId, ClassInfo, ScopeId, ScopeKind, Semantic};
use crate::summary::{ModuleSummary, Resolver};
use ruff_python_ast::{self as ast, Expr, Operator};
use ruff_text_size::{Ranged, TextRange};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::Arc;

/// What kind of object an expression holds.
#[derive(Debug, Clone)]
pub enum Instance<'a> {
    /// A `torch` class (last name, e.g. `CrossEntropyLoss`) and its constructor call.
    Torch(&'a str, &'a ast::ExprCall, ScopeId),
    /// A class defined in this module.
    Local(ClassId, &'a ast::ExprCall, ScopeId),
    /// A `torchvision.models` model: its output is logits.
    Torchvision,
    /// A class of a local module this one imports: its summary and the class name.
    Imported(Arc<ModuleSummary>, &'a str),
}

/// How many steps one question may take: bounds the work on adversarial input.
const FUEL: u32 = 4_000;

mod trace;
mod values;
pub use values::Max;
const MAX_DEPTH: u32 = 24;

/// How many call sites of one function a question looks at: with the fuel, what keeps every
/// question's work bounded, and so the whole analysis linear in the size of the module.
const MAX_CALL_SITES: usize = 64;

/// `(level, module)` of a `from … import`.
type ImportKey<'a> = (u32, &'a str);

pub struct Flow<'a> {
    pub sem: &'a Semantic<'a>,
    fuel: Cell<u32>,
    imports: &'a dyn Resolver,
    /// Local modules asked about so far, by `(level, module)` of the import.
    imported: RefCell<HashMap<ImportKey<'a>, Option<Arc<ModuleSummary>>>>,
}

impl<'a> Flow<'a> {
    pub fn new(sem: &'a Semantic<'a>, imports: &'a dyn Resolver) -> Self {
        Flow { sem, fuel: Cell::new(FUEL), imports, imported: RefCell::new(HashMap::new()) }
    }

    /// The summary of the local module a name was imported from, and the name there.
    pub fn imported(&self, local: &str) -> Option<(Arc<ModuleSummary>, &'a str)> {
        let from = self.sem.imports.get(local)?.from?;
        let key = (from.level, from.module);
        let summary = self
            .imported
            .borrow_mut()
            .entry(key)
            .or_insert_with(|| self.imports.module(from.level, from.module))
            .clone()?;
        Some((summary, from.name))
    }

    /// The local class a method belongs to, when a class defines it or inherits it from a
    /// base class of this module.
    pub fn method(&self, class: ClassId, name: &str) -> Option<ScopeId> {
        let mut current = Some(class);
        for _ in 0..8 {
            let info = &self.sem.classes[current?];
            if let Some(&m) = info.methods.get(name) {
                return Some(m);
            }
            current = self.local_base(info);
        }
        None
    }

    /// The first base class that is defined in this module.
    fn local_base(&self, class: &ClassInfo<'a>) -> Option<ClassId> {
        class.def.arguments.as_ref()?.args.iter().find_map(|base| match base {
            Expr::Name(n) => self.sem.class_by_name.get(n.id.as_str()).copied(),
            _ => None,
        })
    }

    /// The facts of each element of the tuple a class's `forward` returns (`return x, mu`).
    pub fn class_output_elements(&self, class: &ClassInfo<'a>) -> Vec<Facts> {
        let Some(forward) =
            self.sem.class_by_name.get(class.def.name.as_str()).and_then(|&c| self.method(c, "forward"))
        else {
            return Vec::new();
        };
        let Some([Expr::Tuple(tuple)]) = self.sem.returns.get(&forward).map(Vec::as_slice) else {
            return Vec::new();
        };
        tuple
            .elts
            .iter()
            .map(|e| {
                self.fuel.set(FUEL);
                self.expr_facts(e, forward, 0)
            })
            .collect()
    }

    /// What calling an instance of a class returns (its `forward`), with the `return` that shows it.
    pub fn class_output(&self, class: &ClassInfo<'a>) -> (Facts, Option<TextRange>) {
        let Some(id) = self.sem.class_by_name.get(class.def.name.as_str()).copied() else {
            return (Facts::NONE, None);
        };
        match self.method(id, "forward") {
            Some(forward) => self.function_returns(forward),
            None => (Facts::NONE, None),
        }
    }

    /// The facts of what a function returns, joined, with the first `return` that shows them.
    pub fn function_returns(&self, function: ScopeId) -> (Facts, Option<TextRange>) {
        let mut facts = Facts::NONE;
        let mut at = None;
        for ret in self.sem.returns.get(&function).into_iter().flatten() {
            self.fuel.set(FUEL);
            let f = self.expr_facts(ret, function, 0);
            if at.is_none() && f != Facts::NONE {
                at = Some(ret.range());
            }
            facts = facts | f;
        }
        (facts, at)
    }

    fn burn(&self, depth: u32) -> bool {
        let left = self.fuel.get();
        if left == 0 || depth > MAX_DEPTH {
            return false;
        }
        self.fuel.set(left - 1);
        true
    }

    /// The facts about the value of `expr`, evaluated in `scope`.
    pub fn facts(&self, expr: &'a Expr, scope: ScopeId) -> Facts {
        self.fuel.set(FUEL);
        self.expr_facts(expr, scope, 0)
    }

    /// The facts of every assignment of a name in the scope that binds it, joined: what the
    /// value may be on some path (`probs = softmax(x)` in one branch, `scores` in the other).
    /// For other expressions, their facts.
    pub fn facts_on_any_path(&self, expr: &'a Expr, scope: ScopeId) -> Facts {
        let Expr::Name(name) = expr else { return self.facts(expr, scope) };
        let Some((binding_scope, _)) = self.sem.lookup(scope, name.id.as_str(), name.range.start()) else {
            return Facts::NONE;
        };
        let mut facts = Facts::NONE;
        for binding in &self.sem.scopes[binding_scope].bindings[name.id.as_str()] {
            self.fuel.set(FUEL);
            facts = facts | self.bound_facts(&binding.value.clone(), binding_scope, name.id.as_str(), 0);
        }
        facts
    }

    /// What object `expr` holds (a loss, a layer, a model).
    pub fn instance(&self, expr: &'a Expr, scope: ScopeId) -> Option<Instance<'a>> {
        self.fuel.set(FUEL);
        self.instance_at(expr, scope, 0)
    }

    /// The integer value of `expr`, when the module fixes it (literals and constants).
    pub fn int_value(&self, expr: &'a Expr, scope: ScopeId) -> Option<i64> {
        self.fuel.set(FUEL);
        self.int_at(expr, scope, 0)
    }

    /// The expression a name or `self.attr` was last assigned, with its scope; other
    /// expressions are returned as they are.
    pub fn origin(&self, expr: &'a Expr, scope: ScopeId) -> (&'a Expr, ScopeId) {
        self.fuel.set(FUEL);
        self.origin_at(expr, scope, 0)
    }

    fn origin_at(&self, expr: &'a Expr, scope: ScopeId, depth: u32) -> (&'a Expr, ScopeId) {
        let mut current = (expr, scope);
        for _ in 0..MAX_DEPTH {
            if !self.burn(depth) {
                break;
            }
            let next = match current.0 {
                Expr::Name(name) => match self.sem.lookup(current.1, name.id.as_str(), name.range.start()) {
                    Some((s, binding)) => match &binding.value {
                        Bound::Value(value) => Some((*value, s)),
                        // A parameter: what the module's first call passes, or the default.
                        Bound::Param { scope: fn_scope, index, name, default } => self
                            .arguments_at(*fn_scope, *index, name, depth + 1)
                            .first()
                            .copied()
                            .or(default.map(|d| (d, *fn_scope))),
                        _ => None,
                    },
                    None => None,
                },
                Expr::Attribute(attr) => match self.self_attr(attr, current.1) {
                    Some((s, Bound::Value(value))) => Some((value, s)),
                    Some(_) => None,
                    None => self.config_value_at(attr, current.1, depth + 1),
                },
                _ => None,
            };
            match next {
                Some(n) if !std::ptr::eq(n.0, current.0) => current = n,
                _ => break,
            }
        }
        current
    }

    /// The last `self.attr = …` of the class `scope` belongs to.
    fn self_attr(&self, attr: &'a ast::ExprAttribute, scope: ScopeId) -> Option<(ScopeId, Bound<'a>)> {
        let Expr::Name(base) = &*attr.value else { return None };
        if base.id.as_str() != "self" {
            return None;
        }
        let mut class = self.sem.class_of(scope);
        for _ in 0..8 {
            let info = &self.sem.classes[class?];
            if let Some((s, binding)) = info.attrs.get(attr.attr.as_str()).and_then(|a| a.last()) {
                return Some((*s, binding.value.clone()));
            }
            class = self.local_base(info);
        }
        None
    }

    /// The arguments passed for a parameter at this module's calls of its function: calls by
    /// name that resolve to this very `def` (a nested function of the same name elsewhere is
    /// another function), `self.method(…)` in its class, `obj.method(…)` on an instance of
    /// it, and `Class(…)` for `__init__`.
    pub fn arguments_for(&self, fn_scope: ScopeId, index: usize, name: &str) -> Vec<(&'a Expr, ScopeId)> {
        self.fuel.set(FUEL);
        self.arguments_at(fn_scope, index, name, 0)
    }

    /// [`Self::arguments_for`] inside a question already `depth` steps deep: resolving a
    /// receiver may need the arguments of another parameter, and so on, never deeper than
    /// the question's own limit.
    fn arguments_at(
        &self,
        fn_scope: ScopeId,
        index: usize,
        name: &str,
        depth: u32,
    ) -> Vec<(&'a Expr, ScopeId)> {
        if !self.burn(depth) {
            return Vec::new();
        }
        let ScopeKind::Function { def, class } = self.sem.scopes[fn_scope].kind else { return Vec::new() };
        let fn_name = def.name.as_str();
        let mut found = Vec::new();
        let mut add = |site: &crate::semantic::CallSite<'a>, position: Option<usize>| {
            if let Some(arg) = argument(site.call, name, position) {
                found.push((arg, site.scope));
            }
        };
        let Some(class) = class else {
            for site in self.sem.calls_of(fn_name).take(MAX_CALL_SITES) {
                if let Expr::Name(n) = &*site.call.func {
                    if self.sem.function_called(site.scope, fn_name, n.range.start()) == Some(fn_scope) {
                        add(site, Some(index));
                    }
                }
            }
            return found;
        };
        // `self` takes the first position.
        let position = index.checked_sub(1);
        if fn_name == "__init__" {
            let class_name = self.sem.classes[class].def.name.as_str();
            for site in self.sem.calls_of(class_name).take(MAX_CALL_SITES) {
                if matches!(&*site.call.func, Expr::Name(_)) {
                    add(site, position);
                }
            }
        }
        for site in self.sem.calls_of(fn_name).take(MAX_CALL_SITES) {
            let Expr::Attribute(attr) = &*site.call.func else { continue };
            let receiver = match &*attr.value {
                Expr::Name(n) if n.id.as_str() == "self" => self.sem.class_of(site.scope),
                other => match self.instance_at(other, site.scope, depth + 1) {
                    Some(Instance::Local(c, _, _)) => Some(c),
                    _ => None,
                },
            };
            if receiver.is_some_and(|r| r == class || self.method(r, fn_name) == Some(fn_scope)) {
                add(site, position);
            }
        }
        found
    }

    /// The method a call `receiver.name(…)` runs: on `self`, or on an instance of a local class.
    pub fn method_called(&self, attr: &'a ast::ExprAttribute, scope: ScopeId, depth: u32) -> Option<ScopeId> {
        let class = match &*attr.value {
            Expr::Name(n) if n.id.as_str() == "self" => self.sem.class_of(scope)?,
            other => match self.instance_at(other, scope, depth + 1)? {
                Instance::Local(c, _, _) => c,
                _ => return None,
            },
        };
        self.method(class, attr.attr.as_str())
    }

    /// What `base.name` holds when `base` is a configuration: argparse's parsed arguments
    /// (the `default=` of `add_argument`), or an instance of a local (data)class, made here
    /// or named by a parameter's annotation (the keyword given to its constructor, else the
    /// class attribute's default).
    fn config_value_at(
        &self,
        attr: &'a ast::ExprAttribute,
        scope: ScopeId,
        depth: u32,
    ) -> Option<(&'a Expr, ScopeId)> {
        if !self.burn(depth) {
            return None;
        }
        let field = attr.attr.as_str();
        if let Expr::Name(base) = &*attr.value {
            if base.id.as_str() == "self" {
                return None;
            }
            if let Some((_, binding)) = self.sem.lookup(scope, base.id.as_str(), base.range.start()) {
                if let Bound::Param { scope: fn_scope, .. } = binding.value {
                    let def = self.sem.function(fn_scope)?;
                    let param = def
                        .parameters
                        .iter_non_variadic_params()
                        .find(|p| p.parameter.name.as_str() == base.id.as_str())?;
                    if let Some(Expr::Name(class)) = param.parameter.annotation.as_deref() {
                        if let Some(&c) = self.sem.class_by_name.get(class.id.as_str()) {
                            if let Some(v) = self.class_field(c, field) {
                                return Some(v);
                            }
                        }
                    }
                }
            }
        }
        let (base, base_scope) = self.origin_at(&attr.value, scope, depth + 1);
        let Expr::Call(call) = base else { return None };
        match &*call.func {
            Expr::Attribute(method) if matches!(method.attr.as_str(), "parse_args" | "parse_known_args") => {
                let defaults = self.sem.cli_defaults.get(field)?;
                defaults.iter().flatten().next().copied()
            }
            // `args = parse_args()`: a helper of the module that returns the parsed arguments.
            Expr::Name(helper) if self.returns_parsed_arguments(helper, base_scope, depth + 1) => {
                let defaults = self.sem.cli_defaults.get(field)?;
                defaults.iter().flatten().next().copied()
            }
            Expr::Name(class) => {
                let &c = self.sem.class_by_name.get(class.id.as_str())?;
                if let Some(kw) = call.arguments.find_keyword(field) {
                    return Some((&kw.value, base_scope));
                }
                self.class_field(c, field)
            }
            _ => None,
        }
    }

    /// Whether `name` (called) is a function of this module whose every return is
    /// argparse's `parser.parse_args()` (or `parse_known_args()`), directly or through a name.
    fn returns_parsed_arguments(&self, name: &ast::ExprName, scope: ScopeId, depth: u32) -> bool {
        if !self.burn(depth) {
            return false;
        }
        let Some((defining, binding)) = self.sem.lookup(scope, name.id.as_str(), name.range.start()) else {
            return false;
        };
        if !matches!(binding.value, Bound::Unknown) {
            return false;
        }
        let Some(&function) = self.sem.function_in.get(&(defining, name.id.as_str())) else { return false };
        let Some(returns) = self.sem.returns.get(&function) else { return false };
        !returns.is_empty()
            && returns.iter().all(|value| {
                let (value, _) = self.origin_at(value, function, depth + 1);
                matches!(value, Expr::Call(call) if matches!(&*call.func,
                    Expr::Attribute(m) if matches!(m.attr.as_str(), "parse_args" | "parse_known_args")))
            })
    }

    /// The value a name was last assigned before its use, with the scope it was assigned in.
    fn assigned_value(&self, name: &ast::ExprName, scope: ScopeId) -> Option<(&'a Expr, ScopeId)> {
        let (s, binding) = self.sem.lookup(scope, name.id.as_str(), name.range.start())?;
        match binding.value {
            Bound::Value(v) => Some((v, s)),
            _ => None,
        }
    }

    /// A class attribute's value: `temperature: float = 0.0` in a dataclass body.
    fn class_field(&self, class: ClassId, field: &str) -> Option<(&'a Expr, ScopeId)> {
        let scope = self.sem.classes[class].scope;
        let binding = self.sem.scopes[scope].bindings.get(field)?.last()?;
        match binding.value {
            Bound::Value(v) => Some((v, scope)),
            _ => None,
        }
    }

    fn bound_facts(&self, bound: &Bound<'a>, scope: ScopeId, name: &str, depth: u32) -> Facts {
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
    fn element_facts(&self, bound: &Bound<'a>, path: &[usize], scope: ScopeId, depth: u32) -> Facts {
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

    fn expr_element(&self, expr: &'a Expr, path: &[usize], scope: ScopeId, depth: u32) -> Facts {
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
    fn item_element(&self, iter: &'a Expr, path: &[usize], scope: ScopeId, depth: u32) -> Facts {
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
    fn dataset_element(&self, dataset: &'a Expr, path: &[usize], scope: ScopeId, depth: u32) -> Facts {
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
    fn returns_of_call(
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

    fn instance_at(&self, expr: &'a Expr, scope: ScopeId, depth: u32) -> Option<Instance<'a>> {
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

    fn int_at(&self, expr: &'a Expr, scope: ScopeId, depth: u32) -> Option<i64> {
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

    fn expr_facts(&self, expr: &'a Expr, scope: ScopeId, depth: u32) -> Facts {
        if !self.burn(depth) {
            return Facts::NONE;
        }
        match expr {
            Expr::Name(name) => match self.sem.lookup(scope, name.id.as_str(), name.range.start()) {
                Some((s, binding)) => {
                    self.bound_facts(&binding.value.clone(), s, name.id.as_str(), depth + 1)
                }
                None => Facts::NONE,
            },
            Expr::Attribute(attr) => {
                if let Some((s, bound)) = self.self_attr(attr, scope) {
                    return self.bound_facts(&bound, s, attr.attr.as_str(), depth + 1);
                }
                match attr.attr.as_str() {
                    "logits" => Facts::LOGITS,
                    "data" | "T" | "mT" => {
                        self.expr_facts(&attr.value, scope, depth + 1).only(Facts::CARRIED)
                    }
                    _ => Facts::NONE,
                }
            }
            Expr::Call(call) => self.call_facts(call, scope, depth + 1),
            Expr::Subscript(sub) => self.subscript_facts(sub, scope, depth + 1),
            Expr::BinOp(binop) => {
                let left = self.expr_facts(&binop.left, scope, depth + 1);
                let right = self.expr_facts(&binop.right, scope, depth + 1);
                let mut facts = (left | right).only(Facts(
                    Facts::ONE_HOT.0 | Facts::FLOAT.0 | Facts::COLUMN.0 | Facts::INT32.0 | Facts::LOGITS.0,
                ));
                if binop.op == Operator::Div
                    || is_float_literal(&binop.left)
                    || is_float_literal(&binop.right)
                {
                    facts = facts.with_dtype(Facts::FLOAT);
                }
                // `x @ w` is a linear layer written out; other arithmetic keeps what its operands are.
                if binop.op == Operator::MatMult {
                    facts = facts.with(Facts::LOGITS);
                }
                facts
            }
            Expr::If(if_expr) => {
                self.expr_facts(&if_expr.body, scope, depth + 1)
                    | self.expr_facts(&if_expr.orelse, scope, depth + 1)
            }
            Expr::Named(named) => self.expr_facts(&named.value, scope, depth + 1),
            _ => Facts::NONE,
        }
    }

    fn subscript_facts(&self, sub: &'a ast::ExprSubscript, scope: ScopeId, depth: u32) -> Facts {
        // `eye(C)[y]` builds one-hot rows.
        if let Expr::Call(call) = &*sub.value {
            if let Some((root @ ("torch" | "numpy"), "eye")) = self.sem.api(&call.func) {
                let _ = root;
                return Facts::ONE_HOT | Facts::FLOAT;
            }
        }
        if let Some(index) = int_literal(&sub.slice).and_then(|i| usize::try_from(i).ok()) {
            let element = self.expr_element(&sub.value, &[index], scope, depth + 1);
            if element != Facts::NONE {
                return element;
            }
        }
        let facts = self.expr_facts(&sub.value, scope, depth + 1).only(Facts::CARRIED);
        if adds_axis(&sub.slice) {
            facts.with(Facts::COLUMN)
        } else {
            facts
        }
    }

    fn call_facts(&self, call: &'a ast::ExprCall, scope: ScopeId, depth: u32) -> Facts {
        let first_arg = || call.arguments.args.first().filter(|a| !a.is_starred_expr());
        let arg_facts = |e: Option<&'a Expr>| e.map_or(Facts::NONE, |e| self.expr_facts(e, scope, depth + 1));
        if let Some((root, name)) = self.sem.api(&call.func) {
            return match (root, name) {
                ("torch", "one_hot") => Facts::ONE_HOT | Facts::INT64,
                ("torch", "sigmoid" | "expit") => Facts::PROB | Facts::NONNEG,
                ("torch", "softmax") => Facts::PROB | Facts::NONNEG | Facts::SOFTMAX,
                ("torch", "log_softmax") => Facts::LOG_PROB,
                ("torch", "randn" | "randn_like") => Facts::LOGITS | Facts::FLOAT,
                ("torch", "rand" | "rand_like") => Facts::PROB | Facts::NONNEG | Facts::FLOAT,
                ("torch", "exp" | "relu" | "abs" | "square") => {
                    arg_facts(first_arg()).only(Facts::CARRIED).with_range(Facts::NONNEG)
                }
                ("torch", "argmax" | "argmin") => Facts::INT64,
                ("torch", "clamp" | "clip") => clamp_facts(call, arg_facts(first_arg())),
                ("torch", "squeeze" | "flatten" | "ravel") => arg_facts(first_arg()).without(Facts::COLUMN),
                ("torch", "unsqueeze") => unsqueezed(arg_facts(first_arg()), argument(call, "dim", Some(1))),
                ("torch", "IntTensor") => singleton(first_arg()) | Facts::INT32,
                ("torch", "LongTensor") => singleton(first_arg()) | Facts::INT64,
                ("torch", "tensor" | "as_tensor" | "from_numpy") => {
                    let base = arg_facts(first_arg()).only(Facts::CARRIED) | singleton(first_arg());
                    match call.arguments.find_keyword("dtype").map(|k| self.dtype(&k.value)) {
                        Some(Some(dtype)) => base.with_dtype(dtype),
                        Some(None) => base.without(Facts::DTYPES),
                        None => base,
                    }
                }
                ("torch", "cat" | "stack") => match first_arg() {
                    Some(
                        Expr::List(ast::ExprList { elts, .. }) | Expr::Tuple(ast::ExprTuple { elts, .. }),
                    ) => elts
                        .iter()
                        .fold(Facts::NONE, |f, e| f | self.expr_facts(e, scope, depth + 1))
                        .only(Facts::CARRIED),
                    _ => Facts::NONE,
                },
                ("numpy", "array" | "asarray") => {
                    let base = arg_facts(first_arg()).only(Facts::CARRIED);
                    match call.arguments.find_keyword("dtype").map(|k| self.dtype(&k.value)) {
                        Some(Some(dtype)) => base.with_dtype(dtype),
                        Some(None) => base.without(Facts::DTYPES),
                        None => base,
                    }
                }
                ("numpy", "int32") => Facts::INT32,
                _ => match self.instance_at(&call.func, scope, depth + 1) {
                    Some(instance) => self.module_output(instance, depth + 1),
                    None => Facts::NONE,
                },
            };
        }
        if let Some(instance) = self.instance_at(&call.func, scope, depth + 1) {
            return self.module_output(instance, depth + 1);
        }
        match &*call.func {
            Expr::Attribute(attr) => match self.method_called(attr, scope, depth + 1) {
                Some(method) => {
                    let mut facts = Facts::NONE;
                    for ret in self.sem.returns.get(&method).into_iter().flatten() {
                        facts = facts | self.expr_facts(ret, method, depth + 1);
                    }
                    facts
                }
                None => self.method_facts(attr, call, scope, depth + 1),
            },
            // `self(x)` in a method runs the class's forward.
            Expr::Name(name) if name.id.as_str() == "self" => {
                let Some(forward) = self.sem.class_of(scope).and_then(|c| self.method(c, "forward")) else {
                    return Facts::NONE;
                };
                let mut facts = Facts::NONE;
                for ret in self.sem.returns.get(&forward).into_iter().flatten() {
                    facts = facts | self.expr_facts(ret, forward, depth + 1);
                }
                facts
            }
            Expr::Name(name) if self.sem.imports.contains_key(name.id.as_str()) => {
                match self.imported(name.id.as_str()) {
                    Some((module, function)) => {
                        module.functions.get(function).map_or(Facts::NONE, |f| f.returns)
                    }
                    None => Facts::NONE,
                }
            }
            Expr::Name(_) => {
                let mut facts = Facts::NONE;
                for (ret, ret_scope) in self.returns_of_call(call, scope, depth + 1) {
                    facts = facts | self.expr_facts(ret, ret_scope, depth + 1);
                }
                facts
            }
            _ => Facts::NONE,
        }
    }

    fn method_facts(
        &self,
        attr: &'a ast::ExprAttribute,
        call: &'a ast::ExprCall,
        scope: ScopeId,
        depth: u32,
    ) -> Facts {
        let receiver = || self.expr_facts(&attr.value, scope, depth + 1).only(Facts::CARRIED);
        let args = &call.arguments.args;
        match attr.attr.as_str() {
            "to" | "type" | "astype" => {
                let dtype = argument(call, "dtype", Some(0)).map(|d| self.dtype(d));
                match dtype {
                    Some(Some(dtype)) => receiver().with_dtype(dtype),
                    _ => receiver(),
                }
            }
            "cuda" | "cpu" | "detach" | "clone" | "contiguous" | "requires_grad_" | "pin_memory"
            | "numpy" | "copy" | "tolist" => receiver(),
            "long" => receiver().with_dtype(Facts::INT64),
            "int" => receiver().with_dtype(Facts::INT32),
            "float" | "double" | "half" | "bfloat16" => receiver().with_dtype(Facts::FLOAT),
            "view" | "reshape" => {
                // The shape, given as arguments or as one tuple: `[N, 1]` only for a literal
                // last size of 1 after one other size.
                let dims: &[Expr] = match &args[..] {
                    [Expr::Tuple(t)] => &t.elts,
                    [Expr::List(l)] => &l.elts,
                    _ => args,
                };
                let column =
                    dims.len() == 2 && int_literal(&dims[1]) == Some(1) && int_literal(&dims[0]) != Some(1);
                if column {
                    receiver().with(Facts::COLUMN)
                } else {
                    receiver().without(Facts::COLUMN)
                }
            }
            "unsqueeze" => unsqueezed(receiver(), argument(call, "dim", Some(0))),
            "squeeze" | "flatten" | "ravel" | "view_as" | "reshape_as" => receiver().without(Facts::COLUMN),
            "softmax" => Facts::PROB | Facts::NONNEG | Facts::SOFTMAX,
            "log_softmax" => Facts::LOG_PROB,
            "sigmoid" => Facts::PROB | Facts::NONNEG,
            "exp" | "relu" | "abs" | "square" => receiver().with_range(Facts::NONNEG),
            "clamp" | "clip" | "clamp_" => clamp_facts(call, receiver()),
            "argmax" | "argmin" => Facts::INT64,
            _ => Facts::NONE,
        }
    }

    /// What calling a module instance returns.
    fn module_output(&self, instance: Instance<'a>, depth: u32) -> Facts {
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

    /// The dtype an expression names (`torch.int32`, `np.int32`, `"int32"`, `torch.long`, …);
    /// `None` for a dtype that matters to no rule or an unknown expression.
    fn dtype(&self, expr: &Expr) -> Option<Facts> {
        let name = match expr {
            Expr::StringLiteral(s) => s.value.to_str(),
            Expr::Name(n) if n.id.as_str() == "int" => "int64",
            Expr::Name(n) if n.id.as_str() == "float" => "float64",
            _ => match self.sem.api(expr) {
                Some(("torch" | "numpy", name)) => name,
                _ => return None,
            },
        };
        match name {
            "int32"
            | "int"
            | "IntTensor"
            | "intc"
            | "torch.int32"
            | "torch.IntTensor"
            | "torch.cuda.IntTensor" => Some(Facts::INT32),
            "int64" | "long" | "LongTensor" | "torch.LongTensor" | "torch.cuda.LongTensor" => {
                Some(Facts::INT64)
            }
            "float" | "float32" | "float64" | "double" | "half" | "float16" | "bfloat16" | "FloatTensor"
            | "torch.FloatTensor" => Some(Facts::FLOAT),
            _ => None,
        }
    }
}

/// Methods that return the same module (`model.to(device)`, `model.cuda()`).
const PASS_THROUGH_MODULE: &[&str] =
    &["to", "cuda", "cpu", "train", "eval", "float", "double", "half", "requires_grad_"];

/// `unsqueeze(dim)`: a new last axis (`1`, `-1`) turns `[N]` into the column `[N, 1]`; a new
/// first axis (`0`) makes a batch of one (`[1]` from a scalar label), which is no column.
fn unsqueezed(input: Facts, dim: Option<&Expr>) -> Facts {
    match dim.and_then(int_literal) {
        Some(1 | -1) => input.with(Facts::COLUMN),
        _ => input.without(Facts::COLUMN),
    }
}

/// How a DataLoader's default collation changes a sample's facts: `[1]` samples stack to `[N, 1]`.
fn batched(sample: Facts) -> Facts {
    if sample.has(Facts::SINGLETON) {
        sample.without(Facts::SINGLETON).with(Facts::COLUMN)
    } else {
        sample
    }
}

/// `torch.tensor([label])`: a one-element list makes a `[1]` tensor.
fn singleton(arg: Option<&Expr>) -> Facts {
    match arg {
        Some(Expr::List(ast::ExprList { elts, .. })) if elts.len() == 1 && !elts[0].is_list_expr() => {
            Facts::SINGLETON
        }
        _ => Facts::NONE,
    }
}

fn clamp_facts(call: &ast::ExprCall, input: Facts) -> Facts {
    let bound = |name: &str, position: usize| argument(call, name, Some(position));
    let is = |e: Option<&Expr>, v: f64| match e {
        Some(Expr::NumberLiteral(ast::ExprNumberLiteral { value: ast::Number::Float(f), .. })) => *f == v,
        Some(e) => int_literal(e) == Some(v as i64) && v.fract() == 0.0,
        None => false,
    };
    // The receiver form has no input argument: clamp(min, max); the function form clamp(x, min, max).
    let offset = usize::from(matches!(&*call.func, Expr::Attribute(_)) && call.arguments.args.len() < 3);
    let (min, max) = (bound("min", 1 - offset), bound("max", 2 - offset));
    let min_zero = min.is_some_and(|m| is(Some(m), 0.0) || is_small_positive(m));
    if min_zero && max.is_some_and(|m| is(Some(m), 1.0) || is_just_below_one(m)) {
        Facts::PROB | Facts::NONNEG | input.only(Facts::DTYPES)
    } else if min_zero {
        input.with_range(Facts::NONNEG)
    } else {
        input
    }
}

fn float_value(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::NumberLiteral(ast::ExprNumberLiteral { value: ast::Number::Float(f), .. }) => Some(*f),
        Expr::BinOp(b) if b.op == Operator::Sub => {
            let literal = |e: &Expr| match e {
                Expr::NumberLiteral(ast::ExprNumberLiteral { value: ast::Number::Float(f), .. }) => Some(*f),
                _ => int_literal(e).map(|v| v as f64),
            };
            Some(literal(&b.left)? - literal(&b.right)?)
        }
        _ => None,
    }
}

fn is_small_positive(expr: &Expr) -> bool {
    float_value(expr).is_some_and(|v| v > 0.0 && v < 0.5)
}

fn is_just_below_one(expr: &Expr) -> bool {
    float_value(expr).is_some_and(|v| v > 0.5 && v <= 1.0)
}

fn is_float_literal(expr: &Expr) -> bool {
    matches!(expr, Expr::NumberLiteral(ast::ExprNumberLiteral { value: ast::Number::Float(_), .. }))
}

/// `[:, None]`, `[..., None]`, `[:, np.newaxis]`.
fn adds_axis(slice: &Expr) -> bool {
    let Expr::Tuple(tuple) = slice else { return false };
    tuple.elts.len() == 2
        && tuple.elts[0].is_slice_expr() | tuple.elts[0].is_ellipsis_literal_expr()
        && match &tuple.elts[1] {
            Expr::NoneLiteral(_) => true,
            Expr::Attribute(a) => a.attr.as_str() == "newaxis",
            _ => false,
        }
}

/// Names that say the value is raw logits.
fn is_logits_name(name: &str) -> bool {
    name == "logits" || name.ends_with("_logits")
}
