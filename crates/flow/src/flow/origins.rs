//! Where a value comes from inside one module: the expression an assignment, a `self.attr`
//! store or a config field gave it, and the arguments a function's call sites pass.

use super::engine::{Flow, Instance, FUEL, MAX_CALL_SITES, MAX_DEPTH};
use crate::semantic::{argument, Bound, ClassId, ScopeId, ScopeKind};
use ruff_python_ast::{self as ast, Expr};

impl<'a> Flow<'a> {
    /// The expression a name or `self.attr` was last assigned, with its scope; other
    /// expressions are returned as they are.
    pub fn origin(&self, expr: &'a Expr, scope: ScopeId) -> (&'a Expr, ScopeId) {
        self.fuel.set(FUEL);
        self.origin_at(expr, scope, 0)
    }

    pub(super) fn origin_at(&self, expr: &'a Expr, scope: ScopeId, depth: u32) -> (&'a Expr, ScopeId) {
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
    pub(super) fn self_attr(
        &self,
        attr: &'a ast::ExprAttribute,
        scope: ScopeId,
    ) -> Option<(ScopeId, Bound<'a>)> {
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
    pub(super) fn arguments_at(
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
    pub(super) fn config_value_at(
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
    pub(super) fn returns_parsed_arguments(&self, name: &ast::ExprName, scope: ScopeId, depth: u32) -> bool {
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
    pub(super) fn assigned_value(&self, name: &ast::ExprName, scope: ScopeId) -> Option<(&'a Expr, ScopeId)> {
        let (s, binding) = self.sem.lookup(scope, name.id.as_str(), name.range.start())?;
        match binding.value {
            Bound::Value(v) => Some((v, s)),
            _ => None,
        }
    }

    /// A class attribute's value: `temperature: float = 0.0` in a dataclass body.
    pub(super) fn class_field(&self, class: ClassId, field: &str) -> Option<(&'a Expr, ScopeId)> {
        let scope = self.sem.classes[class].scope;
        let binding = self.sem.scopes[scope].bindings.get(field)?.last()?;
        match binding.value {
            Bound::Value(v) => Some((v, scope)),
            _ => None,
        }
    }
}
