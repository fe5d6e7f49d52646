//! Parses and casts of raw text: where a number read from a file or a command line was
//! made.

use super::follow::{Cursor, Outcome, Walker};
use super::made::{self, Values};
use super::project::Module;
use super::query::Role;
use super::resolve::Object;
use crate::semantic::{argument, Bound, ScopeId, ScopeKind};
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

impl<'p, 'a> Walker<'p, 'a> {
    /// `int(x)` / `float(x)`: a parse of raw text makes the value; a cast of a number
    /// carries it.
    pub(super) fn parse_or_cast(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall, name: &str) -> Outcome<'a> {
        let m = cur.m;
        let at = call.start();
        let Some(arg) = call.arguments.args.first() else {
            return self.made(cur, at, format!("`{name}()` gives 0"), Values::exactly(0.0));
        };
        let text = made::text_of(m.file.text(), cur.expr);
        if self.is_text(m, cur.scope, arg, 0) {
            return self.made(cur, at, format!("`{text}` parses it from raw text"), Values::Unknown);
        }
        self.then(self.draft(m, at, Role::Move, format!("cast by `{name}(…)`")), cur.at(arg))
    }

    /// Whether every call of a function in the project passes text for its parameter (a
    /// `parse_row(row)` helper called on the rows of a `csv.DictReader`).
    fn every_caller_passes_text(
        &self,
        m: &'a Module<'a>,
        function: ScopeId,
        index: usize,
        param: &str,
        depth: u32,
    ) -> bool {
        let ScopeKind::Function { class, .. } = m.sem.scopes[function].kind else { return false };
        let position = super::calls::param_position(index, class.is_some());
        let calls = self.callers(m, function);
        !calls.is_empty()
            && calls.len() <= 8
            && calls.iter().all(|(cm, cscope, call)| {
                argument(call, param, position).is_some_and(|arg| {
                    let arg = comprehension_source(cm, call, arg).unwrap_or(arg);
                    self.is_text(cm, *cscope, arg, depth)
                })
            })
    }

    /// Whether an expression provably holds text read from outside (a line of a file, a
    /// CSV field, a split string, `input()`).
    pub(super) fn is_text(&self, m: &'a Module<'a>, scope: ScopeId, expr: &'a Expr, depth: u32) -> bool {
        if depth > 6 {
            return false;
        }
        match expr {
            Expr::StringLiteral(_) | Expr::FString(_) => true,
            Expr::Subscript(sub) => self.is_text(m, scope, &sub.value, depth + 1),
            Expr::Call(call) => match self.project.resolve(m, scope, &call.func) {
                Some(Object::Api("builtins", "input" | "open" | "str")) => true,
                Some(Object::Api("builtins", "list" | "tuple" | "sorted" | "next" | "iter")) => {
                    call.arguments.args.first().is_some_and(|a| self.is_text(m, scope, a, depth + 1))
                }
                Some(Object::Api("csv", "reader" | "DictReader"))
                | Some(Object::Api("io", "StringIO" | "open")) => true,
                _ => matches!(&*call.func, Expr::Attribute(a) if matches!(a.attr.as_str(),
                    "split" | "rsplit" | "strip" | "lstrip" | "rstrip" | "readline" | "readlines" | "read"
                    | "read_text" | "decode" | "group" | "groups" | "splitlines" | "lower" | "upper" | "replace" | "partition")),
            },
            Expr::Name(name) => {
                let Some((s, binding)) = m.sem.lookup(scope, name.id.as_str(), name.range.start()) else {
                    return false;
                };
                let mut bound = &binding.value;
                while let Bound::Element(inner, _) = bound {
                    bound = inner;
                }
                match bound {
                    Bound::Value(v) | Bound::Item(v) => self.is_text(m, s, v, depth + 1),
                    Bound::Param { scope: function, index, name, .. } => {
                        self.every_caller_passes_text(m, *function, *index, name, depth + 1)
                    }
                    _ => false,
                }
            }
            Expr::Attribute(attr) => {
                let Expr::Name(base) = &*attr.value else { return false };
                if base.id.as_str() != "self" {
                    return false;
                }
                let Some(class) = m.sem.class_of(scope) else { return false };
                match m.sem.classes[class].attrs.get(attr.attr.as_str()).map(Vec::as_slice) {
                    Some([(s, binding)]) => match &binding.value {
                        Bound::Value(v) => self.is_text(m, *s, v, depth + 1),
                        _ => false,
                    },
                    _ => false,
                }
            }
            _ => false,
        }
    }
}

/// What a comprehension variable passed to a call iterates (`row` in
/// `[parse_row(row) for row in csv.DictReader(f)]` iterates the reader): the
/// comprehension around the call, innermost first, whose `for` binds the name.
fn comprehension_source<'a>(m: &'a Module<'a>, call: &'a ast::ExprCall, arg: &'a Expr) -> Option<&'a Expr> {
    use ruff_python_ast::visitor::{self, Visitor};
    let Expr::Name(name) = arg else { return None };
    struct Find<'a, 'n> {
        name: &'n str,
        call: ruff_text_size::TextRange,
        found: Option<&'a Expr>,
    }
    impl<'a> Visitor<'a> for Find<'a, '_> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if !expr.range().contains_range(self.call) {
                return;
            }
            let generators = match expr {
                Expr::ListComp(c) => Some(&c.generators),
                Expr::SetComp(c) => Some(&c.generators),
                Expr::Generator(c) => Some(&c.generators),
                Expr::DictComp(c) => Some(&c.generators),
                _ => None,
            };
            if let Some(generators) = generators {
                for generator in generators {
                    if matches!(&generator.target, Expr::Name(t) if t.id.as_str() == self.name) {
                        self.found = Some(&generator.iter);
                    }
                }
            }
            visitor::walk_expr(self, expr);
        }
    }
    let stmt = m.index.statement_at(call.start())?;
    let mut find = Find { name: name.id.as_str(), call: call.range(), found: None };
    find.visit_stmt(stmt);
    find.found
}
