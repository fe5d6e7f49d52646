//! Iteration helpers that pass one part of a value on: `map`, `enumerate`, `zip` and
//! padding.

use super::calls::elems;
use super::follow::{Alias, Cursor, Outcome, Sel, Walker};
use super::made::{self, Values};
use super::project::Module;
use super::query::Role;
use super::resolve::Object;
use crate::semantic::argument;
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;
use std::rc::Rc;

impl<'p, 'a> Walker<'p, 'a> {
    /// `map(f, xs)`: an element is what `f` returns for an element of `xs` (`f` a function,
    /// a lambda, or `functools.partial` of one with some parameters given).
    pub(super) fn mapped(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall) -> Outcome<'a> {
        let at = call.start();
        let text = made::text_of(cur.m.file.text(), cur.expr);
        let (Some(function), Some(items)) = (call.arguments.args.first(), call.arguments.args.get(1)) else {
            return self.end(cur, at, format!("`{text}`: not followed further"));
        };
        if !matches!(cur.first(), Some(Sel::Iter | Sel::Elem | Sel::Index(_))) {
            return self.end(cur, at, format!("the whole of `{text}`; not followed further"));
        }
        let element = cur.at(items).with_path(vec![Sel::Elem]);
        let (target, given): (&'a Expr, Option<&'a ast::ExprCall>) = match function {
            Expr::Call(partial)
                if matches!(
                    self.project.resolve(cur.m, cur.scope, &partial.func),
                    Some(Object::Api("functools", "partial"))
                ) =>
            {
                match partial.arguments.args.first() {
                    Some(f) => (f, Some(partial)),
                    None => return self.end(cur, at, format!("`{text}`: not followed further")),
                }
            }
            other => (other, None),
        };
        let rest = cur.rest();
        let note = format!("each element is made by `{}`", made::text_of(cur.m.file.text(), function));
        let outcome = match self.project.resolve(cur.m, cur.scope, target) {
            Some(Object::Function(fm, fs)) => {
                let Some(def) = fm.sem.function(fs) else { return Outcome::Dead };
                let (mut env, free) = partial_bindings(cur, fm, def, given);
                if let Some(first) = free.first().copied() {
                    env.push(Alias::parameter(fm, def.range, first, element));
                }
                let inner = Cursor { path: rest, ..cur.clone() };
                self.function_returns(&inner, fm, fs, Rc::new(env))
            }
            Some(Object::Lambda(lm, ls, lambda)) if given.is_none() => {
                let mut env = (*cur.env).clone();
                if let Some(first) =
                    lambda.parameters.as_ref().and_then(|p| p.iter_non_variadic_params().next())
                {
                    env.push(Alias {
                        m: lm,
                        within: lambda.range,
                        name: first.parameter.name.as_str(),
                        to: element,
                        sel: Vec::new(),
                        samples: false,
                        param: false,
                    });
                }
                self.follow(Cursor { m: lm, scope: ls, expr: &lambda.body, path: rest, env: Rc::new(env) })
            }
            _ => return self.end(cur, at, format!("`{text}` maps a function not followed")),
        };
        outcome.prepend(Some(self.draft(cur.m, at, Role::Move, note)))
    }

    pub(super) fn enumerate(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall) -> Outcome<'a> {
        let at = call.start();
        let text = made::text_of(cur.m.file.text(), cur.expr);
        let Some(Sel::Iter) = cur.first() else {
            return self.end(cur, at, format!("`{text}`: not followed further"));
        };
        match cur.path.get(1) {
            Some(Sel::Index(0)) => {
                let start = argument(call, "start", Some(1)).and_then(made::number).unwrap_or(0.0);
                let note = format!("numbered by `{text}`, from {}", made::show(start));
                self.made(cur, at, note, Values::Range(Some(start), None))
            }
            Some(Sel::Index(1)) => {
                let Some(arg) = call.arguments.args.first() else { return Outcome::Dead };
                let mut path = vec![Sel::Iter];
                path.extend(cur.path.iter().skip(2).cloned());
                self.follow(cur.at(arg).with_path(path))
            }
            _ => self.end(cur, at, format!("a whole item of `{text}`; not followed further")),
        }
    }

    pub(super) fn zip(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall) -> Outcome<'a> {
        let at = call.start();
        match (cur.first(), cur.path.get(1)) {
            (Some(Sel::Iter), Some(Sel::Index(i))) => {
                let Some(arg) = usize::try_from(*i).ok().and_then(|i| call.arguments.args.get(i)) else {
                    return Outcome::Dead;
                };
                let mut path = vec![Sel::Iter];
                path.extend(cur.path.iter().skip(2).cloned());
                self.follow(cur.at(arg).with_path(path))
            }
            _ => self.end(cur, at, "a whole item of `zip(…)`; not followed further"),
        }
    }

    /// `pad_sequence(seqs, padding_value=-1)`: the padding constant, or the sequences' values.
    pub(super) fn padded(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall, name: &str) -> Outcome<'a> {
        let m = cur.m;
        let at = call.start();
        let text = made::text_of(m.file.text(), cur.expr);
        let (padding, default) = match name {
            "pad_sequence" => (argument(call, "padding_value", Some(2)), 0.0),
            _ => (argument(call, "value", Some(3)), 0.0),
        };
        let value = padding.and_then(made::number).unwrap_or(default);
        let pad =
            self.made(cur, at, format!("`{text}` pads with {}", made::show(value)), Values::exactly(value));
        let Some(seqs) = call.arguments.args.first() else { return pad };
        let path = if name == "pad_sequence" { cur.prefixed(&[Sel::Elem]) } else { cur.path.clone() };
        let inner = self.then(
            self.draft(m, at, Role::Move, format!("padded by `{name}`")),
            cur.at(seqs).with_path(elems(&path)),
        );
        self.pick(cur, at, &format!("`{text}`"), vec![pad, inner])
    }
}

/// A `functools.partial(f, …)` of `def`: the aliases of the parameters it gives (by position
/// after `f`, or by keyword) and the parameters it leaves free, in order. With no partial,
/// every parameter is free.
fn partial_bindings<'a>(
    cur: &Cursor<'a>,
    fm: &'a Module<'a>,
    def: &'a ast::StmtFunctionDef,
    given: Option<&'a ast::ExprCall>,
) -> (Vec<Alias<'a>>, Vec<&'a str>) {
    let mut env = Vec::new();
    let mut free =
        def.parameters.iter_non_variadic_params().map(|p| p.parameter.name.as_str()).collect::<Vec<_>>();
    if let Some(partial) = given {
        for (i, arg) in partial.arguments.args.iter().skip(1).enumerate() {
            if let Some(name) = free.get(i).copied() {
                env.push(Alias::parameter(fm, def.range, name, cur.at(arg).with_path(Vec::new())));
            }
        }
        free.drain(..partial.arguments.args.len().saturating_sub(1).min(free.len()));
        for keyword in &partial.arguments.keywords {
            let Some(name) = keyword.arg.as_ref().map(|a| a.as_str()) else { continue };
            free.retain(|f| *f != name);
            if let Some(param) =
                def.parameters.iter_non_variadic_params().find(|p| p.parameter.name.as_str() == name)
            {
                let name = param.parameter.name.as_str();
                env.push(Alias::parameter(fm, def.range, name, cur.at(&keyword.value).with_path(Vec::new())));
            }
        }
    }
    (env, free)
}
