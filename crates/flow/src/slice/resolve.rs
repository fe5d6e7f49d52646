//! What object an expression names, across the project's modules: a function, a class, an
//! instance of one (with the call that built it), a local module, a lambda, a torch API or
//! an instance of a torch class. The steps of a slice ask it which code a call runs.

use super::project::{Module, Project};
use crate::imports::module_path;
use crate::semantic::{Bound, ClassId, ScopeId, ScopeKind, MODULE};
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextSize};

#[derive(Clone, Copy)]
pub enum Object<'a> {
    Function(&'a Module<'a>, ScopeId),
    /// A method looked up on an instance or `self`: its first parameter is bound.
    Method(&'a Module<'a>, ScopeId),
    Class(&'a Module<'a>, ClassId),
    /// An instance of a user class, with the call that built it when known.
    Instance(&'a Module<'a>, ClassId, Option<Built<'a>>),
    Module(&'a Module<'a>),
    Lambda(&'a Module<'a>, ScopeId, &'a ast::ExprLambda),
    /// A name of a library: `(root module, last name)`, e.g. `("torch", "cross_entropy")`.
    Api(&'a str, &'a str),
    /// An instance of a library class (`nn.CrossEntropyLoss()`), with the call that built it.
    LibraryInstance(&'a str, &'a str, Built<'a>),
}

/// A constructor call: where it is and what it passed.
#[derive(Clone, Copy)]
pub struct Built<'a> {
    pub m: &'a Module<'a>,
    pub scope: ScopeId,
    pub call: &'a ast::ExprCall,
}

impl<'a> Built<'a> {
    /// The call as an expression of its module (the statement's own node).
    pub fn call_expr(&self) -> Option<&'a Expr> {
        find_call(self.m, self.call)
    }
}

/// The expression node that is `call` (calls are found in statements as `ExprCall`s).
fn find_call<'a>(m: &'a Module<'a>, call: &'a ast::ExprCall) -> Option<&'a Expr> {
    use ruff_python_ast::visitor::{self, Visitor};
    struct Find<'a> {
        target: ruff_text_size::TextRange,
        found: Option<&'a Expr>,
    }
    impl<'a> Visitor<'a> for Find<'a> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if self.found.is_some() || !expr.range().contains_range(self.target) {
                return;
            }
            if matches!(expr, Expr::Call(_)) && expr.range() == self.target {
                self.found = Some(expr);
                return;
            }
            visitor::walk_expr(self, expr);
        }
    }
    let stmt = m.index.statement_at(call.start())?;
    let mut find = Find { target: call.range(), found: None };
    find.visit_stmt(stmt);
    find.found
}

const MAX_DEPTH: u32 = 12;

/// Methods that return the object they are called on (`model.to(device)`).
const SAME_OBJECT: &[&str] =
    &["to", "cuda", "cpu", "train", "eval", "float", "double", "half", "requires_grad_"];

impl<'a> Project<'a> {
    /// `accelerator.prepare(model, loader, …)` and Fabric's `setup(model, optimizer)` /
    /// `setup_dataloaders(loader)` return what they are given, in order, wrapped for the
    /// devices: for element `element` of the result (`None`: the whole result of a call
    /// given one object), the argument it is, and the wrapper's class.
    pub fn prepared_argument(
        &self,
        m: &'a Module<'a>,
        scope: ScopeId,
        call: &'a ast::ExprCall,
        element: Option<usize>,
    ) -> Option<(&'a Expr, &'static str)> {
        let Expr::Attribute(attr) = &*call.func else { return None };
        let method = attr.attr.as_str();
        let wrapper = match self.resolve(m, scope, &attr.value)? {
            Object::LibraryInstance("accelerate", "Accelerator", _) if method == "prepare" => "Accelerator",
            Object::LibraryInstance("lightning" | "lightning_fabric" | "pytorch_lightning", "Fabric", _)
                if matches!(method, "setup" | "setup_dataloaders") =>
            {
                "Fabric"
            }
            _ => return None,
        };
        let args = &call.arguments.args;
        if args.iter().any(Expr::is_starred_expr) {
            return None;
        }
        // `setup(model, optimizer)` returns the pair; `setup(model)` the model alone.
        let arg = match (&args[..], element) {
            ([only], None) => only,
            (many, Some(i)) if many.len() > 1 => many.get(i)?,
            _ => return None,
        };
        Some((arg, wrapper))
    }

    /// The object `expr` (in `scope` of `m`) names.
    pub fn resolve(&self, m: &'a Module<'a>, scope: ScopeId, expr: &'a Expr) -> Option<Object<'a>> {
        self.resolve_at(m, scope, expr, 0)
    }

    fn resolve_at(
        &self,
        m: &'a Module<'a>,
        scope: ScopeId,
        expr: &'a Expr,
        depth: u32,
    ) -> Option<Object<'a>> {
        if depth > MAX_DEPTH {
            return None;
        }
        match expr {
            Expr::Name(name) => self.resolve_name(m, scope, name.id.as_str(), name.range.start(), depth + 1),
            Expr::Attribute(attr) => self.resolve_attribute(m, scope, attr, depth + 1),
            Expr::Call(call) => self.resolve_call(m, scope, call, depth + 1),
            Expr::Lambda(lambda) => Some(Object::Lambda(m, scope, lambda)),
            Expr::Subscript(sub) => self.resolve_subscript(m, scope, sub, depth + 1),
            _ => None,
        }
    }

    /// What `name`, read at `at` in `scope`, names.
    pub fn resolve_name(
        &self,
        m: &'a Module<'a>,
        scope: ScopeId,
        name: &str,
        at: TextSize,
        depth: u32,
    ) -> Option<Object<'a>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let Some((defining, binding)) = m.sem.lookup(scope, name, at) else {
            return builtin(name).map(|b| Object::Api("builtins", b));
        };
        match &binding.value {
            Bound::Value(value) => self.resolve_at(m, defining, value, depth + 1),
            Bound::Element(inner, i) => match &**inner {
                Bound::Value(Expr::Call(call)) => {
                    let (arg, _) = self.prepared_argument(m, defining, call, Some(*i))?;
                    self.resolve_at(m, defining, arg, depth + 1)
                }
                _ => None,
            },
            Bound::Unknown => {
                if let Some(&function) = m.sem.function_in.get(&(defining, name)) {
                    return Some(Object::Function(m, function));
                }
                if let Some(&class) = m.sem.class_by_name.get(name) {
                    if m.sem.scopes[m.sem.classes[class].scope].parent == Some(defining) {
                        return Some(Object::Class(m, class));
                    }
                }
                self.resolve_import(m, name, depth + 1)
            }
            _ => None,
        }
    }

    /// An imported name: a local module's object, a local module, or a library's name.
    fn resolve_import(&self, m: &'a Module<'a>, name: &str, depth: u32) -> Option<Object<'a>> {
        let import = m.sem.imports.get(name)?;
        match import.from {
            Some(from) => {
                if let Some(path) = module_path(m.path, from.level, from.module) {
                    let other = self.module(&path)?;
                    return self.resolve_global(other, from.name, depth + 1);
                }
                // `from . import data`, `from pkg import data`: a module of the package.
                let submodule = if from.module.is_empty() {
                    from.name.to_string()
                } else {
                    format!("{}.{}", from.module, from.name)
                };
                if let Some(path) = module_path(m.path, from.level, &submodule) {
                    return self.module(&path).map(Object::Module);
                }
                (from.level == 0).then(|| Object::Api(import.root(), from.name))
            }
            None => {
                if let Some(path) = module_path(m.path, 0, &import.qualified) {
                    return self.module(&path).map(Object::Module);
                }
                Some(Object::Api(import.root(), import.qualified.rsplit('.').next().unwrap_or("")))
            }
        }
    }

    /// What a module-level name of `m` names.
    pub fn resolve_global(&self, m: &'a Module<'a>, name: &str, depth: u32) -> Option<Object<'a>> {
        let end = m.file.suite().last().map_or(TextSize::default(), |s| s.end());
        self.resolve_name(m, MODULE, name, end + TextSize::from(1), depth + 1)
    }

    fn resolve_attribute(
        &self,
        m: &'a Module<'a>,
        scope: ScopeId,
        attr: &'a ast::ExprAttribute,
        depth: u32,
    ) -> Option<Object<'a>> {
        let field = attr.attr.as_str();
        if let Expr::Name(base) = &*attr.value {
            if base.id.as_str() == "self" {
                let class = m.sem.class_of(scope)?;
                if let Some((mm, method)) = self.method_of(m, class, field) {
                    return Some(Object::Method(mm, method));
                }
                return self.attribute_object(m, class, field, depth + 1);
            }
        }
        match self.resolve_at(m, scope, &attr.value, depth + 1) {
            Some(Object::Module(other)) => self.resolve_global(other, field, depth + 1),
            Some(Object::Instance(im, class, _)) => match self.method_of(im, class, field) {
                Some((mm, method)) => Some(Object::Method(mm, method)),
                None => self.attribute_object(im, class, field, depth + 1),
            },
            Some(Object::Class(cm, class)) => {
                let (mm, method) = self.method_of(cm, class, field)?;
                Some(Object::Function(mm, method))
            }
            Some(Object::Api(root, _)) => Some(Object::Api(root, field)),
            Some(Object::LibraryInstance("torch", "ModuleDict", built)) => {
                self.module_dict_entry(built, field, depth + 1)
            }
            _ => None,
        }
    }

    /// `layers['wte']` of `layers = nn.ModuleDict(...)`: the entry's module.
    fn resolve_subscript(
        &self,
        m: &'a Module<'a>,
        scope: ScopeId,
        sub: &'a ast::ExprSubscript,
        depth: u32,
    ) -> Option<Object<'a>> {
        let Expr::StringLiteral(key) = &*sub.slice else { return None };
        match self.resolve_at(m, scope, &sub.value, depth + 1)? {
            Object::LibraryInstance("torch", "ModuleDict", built) => {
                self.module_dict_entry(built, key.value.to_str(), depth + 1)
            }
            _ => None,
        }
    }

    /// The module a `nn.ModuleDict` built from `dict(key=module, ...)` or a literal
    /// `{'key': module}` holds under `key`: the layer `self.transformer.wte(idx)` runs.
    fn module_dict_entry(&self, built: Built<'a>, key: &str, depth: u32) -> Option<Object<'a>> {
        let (m, scope) = (built.m, built.scope);
        let value: &'a Expr = match built.call.arguments.args.first()? {
            Expr::Call(call)
                if matches!(
                    self.resolve_at(m, scope, &call.func, depth + 1),
                    Some(Object::Api("builtins", "dict"))
                ) =>
            {
                let keyword = call
                    .arguments
                    .keywords
                    .iter()
                    .find(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == key))?;
                &keyword.value
            }
            Expr::Dict(dict) => {
                let item = dict.items.iter().find(
                    |item| matches!(&item.key, Some(Expr::StringLiteral(s)) if s.value.to_str() == key),
                )?;
                &item.value
            }
            _ => return None,
        };
        self.resolve_at(m, scope, value, depth + 1)
    }

    /// The object a class's attribute holds, when every store of it in the class agrees.
    fn attribute_object(
        &self,
        m: &'a Module<'a>,
        class: ClassId,
        field: &str,
        depth: u32,
    ) -> Option<Object<'a>> {
        let stores = m.sem.classes[class].attrs.get(field)?;
        let (store_scope, binding) = stores.last()?;
        match &binding.value {
            Bound::Value(value) => self.resolve_at(m, *store_scope, value, depth + 1),
            _ => None,
        }
    }

    fn resolve_call(
        &self,
        m: &'a Module<'a>,
        scope: ScopeId,
        call: &'a ast::ExprCall,
        depth: u32,
    ) -> Option<Object<'a>> {
        if let Expr::Attribute(attr) = &*call.func {
            if SAME_OBJECT.contains(&attr.attr.as_str()) {
                if let Some(o @ (Object::Instance(..) | Object::LibraryInstance(..))) =
                    self.resolve_at(m, scope, &attr.value, depth + 1)
                {
                    return Some(o);
                }
            }
        }
        if let Some((arg, _)) = self.prepared_argument(m, scope, call, None) {
            return self.resolve_at(m, scope, arg, depth + 1);
        }
        let built = Built { m, scope, call };
        match self.resolve_at(m, scope, &call.func, depth + 1)? {
            Object::Class(cm, class) => Some(Object::Instance(cm, class, Some(built))),
            Object::Api("torch", "compile") => {
                let model = call.arguments.args.first()?;
                self.resolve_at(m, scope, model, depth + 1)
            }
            Object::Api(root, name) if name.starts_with(|c: char| c.is_ascii_uppercase()) => {
                Some(Object::LibraryInstance(root, name, built))
            }
            Object::Function(fm, function) | Object::Method(fm, function) => {
                let returns = fm.sem.returns.get(&function)?;
                match returns.as_slice() {
                    [only] => self.resolve_at(fm, function, only, depth + 1),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The method `name` of a class, defined in it or inherited from a user base class
    /// (of this module or one it imports).
    pub fn method_of(
        &self,
        m: &'a Module<'a>,
        class: ClassId,
        name: &str,
    ) -> Option<(&'a Module<'a>, ScopeId)> {
        let mut current = (m, class);
        for _ in 0..8 {
            let (cm, c) = current;
            let info = &cm.sem.classes[c];
            if let Some(&method) = info.methods.get(name) {
                return Some((cm, method));
            }
            current = self.user_base(cm, c)?;
        }
        None
    }

    /// The first base class of a class that is a user class.
    pub fn user_base(&self, m: &'a Module<'a>, class: ClassId) -> Option<(&'a Module<'a>, ClassId)> {
        let info = &m.sem.classes[class];
        let parent = m.sem.scopes[info.scope].parent.unwrap_or(MODULE);
        info.def.arguments.as_ref()?.args.iter().find_map(|base| {
            match self.resolve_at(m, parent, base, MAX_DEPTH - 3)? {
                Object::Class(bm, b) => Some((bm, b)),
                _ => None,
            }
        })
    }

    /// The name of the function or method whose body is `scope`, with its class.
    pub fn function_name(m: &Module<'_>, scope: ScopeId) -> String {
        match m.sem.scopes[scope].kind {
            ScopeKind::Function { def, class: Some(c) } => {
                format!("{}.{}", m.sem.classes[c].def.name, def.name)
            }
            ScopeKind::Function { def, class: None } => def.name.to_string(),
            ScopeKind::Class(c) => m.sem.classes[c].def.name.to_string(),
            ScopeKind::Module => "<module>".to_string(),
        }
    }
}

/// Builtins a slice knows: they name a library API of the `builtins` root.
fn builtin(name: &str) -> Option<&'static str> {
    const BUILTINS: &[&str] = &[
        "int",
        "float",
        "len",
        "list",
        "tuple",
        "dict",
        "set",
        "sorted",
        "reversed",
        "enumerate",
        "zip",
        "range",
        "iter",
        "next",
        "map",
        "filter",
        "min",
        "max",
        "sum",
        "abs",
        "round",
        "str",
        "bool",
        "open",
        "input",
        "print",
        "isinstance",
        "getattr",
        "any",
        "all",
    ];
    BUILTINS.iter().find(|b| **b == name).copied()
}
