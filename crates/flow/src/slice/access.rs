//! Subscripts and called values: `batch["labels"]` unpacks, `self.y[i]` reads one element
//! of a container, `x[:, 1:]` is a view of the same values; a value that is called
//! (`self.target_transform(t)`) is followed to the function it holds, whose return is
//! then followed with its parameters bound to the call's arguments.

use super::calls::{lambda_env, reshaped};
use super::follow::{Cursor, Outcome, Sel, Walker};
use super::made;
use super::query::Role;
use super::resolve::Object;
use crate::semantic::int_literal;
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;
use std::rc::Rc;

impl<'p, 'a> Walker<'p, 'a> {
    pub fn subscript(&self, cur: &Cursor<'a>, sub: &'a ast::ExprSubscript) -> Outcome<'a> {
        if let Some(found) = self.sample_subscript(cur, sub) {
            return found;
        }
        let m = cur.m;
        let at = sub.start();
        let container = made::text_of(m.file.text(), &sub.value);
        let value = cur.at(&sub.value);
        match &*sub.slice {
            slice if int_literal(slice).is_some() => {
                let i = int_literal(slice).unwrap();
                let note = format!("element {i} of `{container}`");
                self.then(
                    self.draft(m, at, Role::Unpack, note),
                    value.with_path(cur.prefixed(&[Sel::Index(i)])),
                )
            }
            Expr::StringLiteral(key) => {
                let key = key.value.to_str().to_string();
                let note = format!("taken from `{container}[\"{key}\"]`");
                self.then(
                    self.draft(m, at, Role::Unpack, note),
                    value.with_path(cur.prefixed(&[Sel::Key(key)])),
                )
            }
            slice if is_view(slice) => {
                let note = format!("a view of `{container}`");
                self.then(self.draft(m, at, Role::Move, note), value.with_path(reshaped(&cur.path)))
            }
            _ => {
                let note = format!("read from `{container}`");
                self.then(self.draft(m, at, Role::Read, note), value.with_path(cur.prefixed(&[Sel::Elem])))
            }
        }
    }

    /// The cursor is a called value (`Sel::Returned` first): the function it holds.
    pub fn returned(&self, cur: &Cursor<'a>, id: usize) -> Option<Outcome<'a>> {
        let (call_cur, call) = self.call_site(id)?;
        let rest = cur.rest();
        let object = match cur.expr {
            Expr::Lambda(lambda) => Some(Object::Lambda(cur.m, cur.scope, lambda)),
            Expr::Name(_) | Expr::Attribute(_) => self.project.resolve(cur.m, cur.scope, cur.expr),
            _ => None,
        };
        let inner = Cursor { path: rest, ..call_cur.clone() };
        Some(match object? {
            Object::Lambda(lm, ls, lambda) => {
                let env = lambda_env(&Cursor { m: lm, ..cur.clone() }, lambda, call, &call_cur);
                self.follow(Cursor { m: lm, scope: ls, expr: &lambda.body, path: inner.path, env })
            }
            Object::Function(fm, fs) => self.bound_returns(&inner, call, fm, fs, false),
            Object::Method(fm, fs) => self.bound_returns(&inner, call, fm, fs, true),
            _ => return None,
        })
    }

    fn bound_returns(
        &self,
        cur: &Cursor<'a>,
        call: &'a ast::ExprCall,
        fm: &'a super::project::Module<'a>,
        fs: crate::semantic::ScopeId,
        method: bool,
    ) -> Outcome<'a> {
        let mut env = Vec::new();
        let caller = Cursor { path: Vec::new(), ..cur.clone() };
        self.bind_call(&mut env, fm, fs, call, &caller, method);
        self.function_returns(cur, fm, fs, Rc::new(env))
    }
}

/// `x[:, 1:]`, `x[..., None]`, `x[None]`: the same values, positioned differently.
fn is_view(slice: &Expr) -> bool {
    match slice {
        Expr::Slice(_) | Expr::EllipsisLiteral(_) | Expr::NoneLiteral(_) => true,
        Expr::Tuple(t) => t.elts.iter().all(|e| is_view(e) || int_literal(e).is_some()),
        _ => false,
    }
}
