//! The model of one module: its scopes and their bindings, classes, calls and imports, and
//! the questions the value tracing asks of it.

use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::TextSize;
// The model's tables are keyed by names, scopes and offsets from the file being linted, and
// every expression looks names up: FxHash (rustc's hasher, already built for ruff's parser)
// rather than std's SipHash, which a release build may also link unoptimised from a
// dependency (Cargo.toml says why).
use rustc_hash::FxHashMap;

pub type ScopeId = usize;
pub type ClassId = usize;

/// The module scope.
pub const MODULE: ScopeId = 0;

#[derive(Debug)]
pub enum ScopeKind<'a> {
    Module,
    Class(ClassId),
    Function { def: &'a ast::StmtFunctionDef, class: Option<ClassId> },
}

#[derive(Debug)]
pub struct Scope<'a> {
    pub parent: Option<ScopeId>,
    pub kind: ScopeKind<'a>,
    pub bindings: FxHashMap<&'a str, Vec<Binding<'a>>>,
}

/// One assignment of a name: where it happened and what it holds.
#[derive(Debug, Clone)]
pub struct Binding<'a> {
    pub offset: TextSize,
    pub value: Bound<'a>,
}

/// What a binding holds, as far as one module tells.
#[derive(Debug, Clone)]
pub enum Bound<'a> {
    /// `name = expr`
    Value(&'a Expr),
    /// Element `index` of an unpacked value: `a, b = expr`.
    Element(Box<Bound<'a>>, usize),
    /// One item of iterating `expr`: `for name in expr`.
    Item(&'a Expr),
    /// Parameter `index` (counting `self`) of the function whose body is `scope`.
    Param { scope: ScopeId, index: usize, name: &'a str, default: Option<&'a Expr> },
    /// Augmented assignments, `with … as`, imports, `del`, …
    Unknown,
}

#[derive(Debug)]
pub struct ClassInfo<'a> {
    pub def: &'a ast::StmtClassDef,
    pub scope: ScopeId,
    pub methods: FxHashMap<&'a str, ScopeId>,
    /// `self.attr = value` in any method, with the method's scope.
    pub attrs: FxHashMap<&'a str, Vec<(ScopeId, Binding<'a>)>>,
}

#[derive(Debug, Clone, Copy)]
pub struct CallSite<'a> {
    pub call: &'a ast::ExprCall,
    pub scope: ScopeId,
    /// Inside an `if` whose test mentions CUDA or the GPU.
    pub cuda_guarded: bool,
}

/// An imported name: `import torch.nn as nn` binds `nn` to `torch.nn`.
#[derive(Debug, Clone)]
pub struct Import<'a> {
    pub qualified: String,
    /// For `from MODULE import NAME`: where the name comes from, to find local modules.
    pub from: Option<FromImport<'a>>,
}

/// `from ..pkg.models import Net`: level 2, module `pkg.models`, name `Net`.
#[derive(Debug, Clone, Copy)]
pub struct FromImport<'a> {
    pub level: u32,
    pub module: &'a str,
    pub name: &'a str,
}

impl Import<'_> {
    pub fn root(&self) -> &str {
        self.qualified.split('.').next().unwrap_or("")
    }
}

#[derive(Debug)]
pub struct Semantic<'a> {
    pub scopes: Vec<Scope<'a>>,
    pub classes: Vec<ClassInfo<'a>>,
    pub class_by_name: FxHashMap<&'a str, ClassId>,
    /// Functions and methods by name (several classes may define the same method).
    pub functions: FxHashMap<&'a str, Vec<ScopeId>>,
    pub calls: Vec<CallSite<'a>>,
    /// Indices into `calls` by the callee's last name (`f(…)`, `obj.f(…)`): the call sites of
    /// a function are found without scanning every call, which kept the analysis linear.
    pub calls_by_callee: FxHashMap<&'a str, Vec<usize>>,
    /// Functions by `(scope that defines them, name)`; the last definition wins.
    pub function_in: FxHashMap<(ScopeId, &'a str), ScopeId>,
    /// `name[…] = value` stores, by the scope and name of the container.
    pub item_stores: FxHashMap<(ScopeId, &'a str), Vec<&'a Expr>>,
    /// `parser.add_argument("--name", default=…)`: the default by destination name (`None`
    /// when the argument has none).
    pub cli_defaults: FxHashMap<String, Vec<Option<(&'a Expr, ScopeId)>>>,
    /// The name (or `self` attribute) a value was assigned to, by the value's start offset.
    pub assigned_to: FxHashMap<TextSize, &'a str>,
    /// The `return` values of each function scope.
    pub returns: FxHashMap<ScopeId, Vec<&'a Expr>>,
    pub imports: FxHashMap<&'a str, Import<'a>>,
    /// Every name read, with its scope: how rules tell whether a constant is used.
    pub loads: FxHashMap<&'a str, Vec<(ScopeId, TextSize)>>,
    /// Set when the module nests deeper than the analysis follows.
    pub truncated: bool,
}

impl<'a> Semantic<'a> {
    /// The function a call of `name` made from `scope` at `at` runs, when `name` is bound to
    /// a `def` of this module (in that scope or an enclosing one).
    pub fn function_called(&self, scope: ScopeId, name: &str, at: TextSize) -> Option<ScopeId> {
        let (defining, binding) = self.lookup(scope, name, at)?;
        if !matches!(binding.value, Bound::Unknown) {
            return None;
        }
        self.function_in.get(&(defining, name)).copied()
    }

    /// The call sites whose callee's last name is `name`.
    pub fn calls_of<'s>(&'s self, name: &str) -> impl Iterator<Item = &'s CallSite<'a>> + 's {
        self.calls_by_callee.get(name).into_iter().flatten().map(|&i| &self.calls[i])
    }

    /// The class a function scope is a method of.
    pub fn class_of(&self, scope: ScopeId) -> Option<ClassId> {
        let mut s = Some(scope);
        while let Some(id) = s {
            match self.scopes[id].kind {
                ScopeKind::Function { class: Some(c), .. } => return Some(c),
                ScopeKind::Class(c) => return Some(c),
                _ => s = self.scopes[id].parent,
            }
        }
        None
    }

    /// The function definition whose body is `scope`.
    pub fn function(&self, scope: ScopeId) -> Option<&'a ast::StmtFunctionDef> {
        match self.scopes[scope].kind {
            ScopeKind::Function { def, .. } => Some(def),
            _ => None,
        }
    }

    /// The binding of `name` visible at `at` in `scope`: the last assignment before `at` in
    /// the innermost scope that assigns it (the last one at all in enclosing scopes, whose
    /// code may run before or after). Class bodies are skipped from methods, as in Python.
    pub fn lookup(&self, scope: ScopeId, name: &str, at: TextSize) -> Option<(ScopeId, &Binding<'a>)> {
        let mut current = Some(scope);
        let mut innermost = true;
        while let Some(id) = current {
            let s = &self.scopes[id];
            let skip = !innermost && matches!(s.kind, ScopeKind::Class(_));
            if !skip {
                if let Some(bindings) = s.bindings.get(name) {
                    let before = if innermost {
                        bindings[..bindings.partition_point(|b| b.offset < at)].last()
                    } else {
                        None
                    };
                    return before.or(bindings.last()).map(|b| (id, b));
                }
            }
            innermost = false;
            current = s.parent;
        }
        None
    }

    /// `(root module, last segment)` of an expression naming an imported API:
    /// `F.one_hot` with `import torch.nn.functional as F` gives `("torch", "one_hot")`.
    pub fn api<'e>(&'e self, expr: &'e Expr) -> Option<(&'e str, &'e str)> {
        match expr {
            Expr::Name(name) => {
                let import = self.imports.get(name.id.as_str())?;
                Some((import.root(), import.qualified.rsplit('.').next().unwrap_or("")))
            }
            Expr::Attribute(attr) => {
                let mut base = &*attr.value;
                while let Expr::Attribute(inner) = base {
                    base = &inner.value;
                }
                let Expr::Name(root) = base else { return None };
                let import = self.imports.get(root.id.as_str())?;
                Some((import.root(), attr.attr.as_str()))
            }
            _ => None,
        }
    }

    /// The last segment of an API in `root` (`torch`, `numpy`, …), if `expr` names one.
    pub fn api_in<'e>(&'e self, expr: &'e Expr, root: &str) -> Option<&'e str> {
        match self.api(expr) {
            Some((r, last)) if r == root => Some(last),
            _ => None,
        }
    }

    /// Whether `name` is read anywhere in the module.
    pub fn is_loaded(&self, name: &str) -> bool {
        self.loads.get(name).is_some_and(|l| !l.is_empty())
    }
}
