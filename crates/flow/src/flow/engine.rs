//! The engine's state: the module's semantic model, the fuel that bounds one question,
//! the local modules asked about; and the questions other modules ask it.

use crate::facts::Facts;
use crate::semantic::{ClassId, ClassInfo, ScopeId, Semantic};
use crate::summary::{ModuleSummary, Resolver};
use ruff_python_ast::{self as ast, Expr};
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
pub(super) const FUEL: u32 = 4_000;

pub(super) const MAX_DEPTH: u32 = 24;

/// How many call sites of one function a question looks at: with the fuel, what keeps every
/// question's work bounded, and so the whole analysis linear in the size of the module.
pub(super) const MAX_CALL_SITES: usize = 64;

/// `(level, module)` of a `from … import`.
type ImportKey<'a> = (u32, &'a str);

pub struct Flow<'a> {
    pub sem: &'a Semantic<'a>,
    pub(super) fuel: Cell<u32>,
    pub(super) imports: &'a dyn Resolver,
    /// Local modules asked about so far, by `(level, module)` of the import.
    pub(super) imported: RefCell<HashMap<ImportKey<'a>, Option<Arc<ModuleSummary>>>>,
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
    pub(super) fn local_base(&self, class: &ClassInfo<'a>) -> Option<ClassId> {
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

    pub(super) fn burn(&self, depth: u32) -> bool {
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
}
