//! A user function's call: its parameters bound to the call's arguments, and the `return`
//! values (or a lambda's body) the value is one of.

use super::calls::{lambda_env, param_position};
use super::follow::{Alias, Cursor, Outcome, Sel, Walker};
use super::project::{Module, Project};
use super::query::Role;
use super::resolve::Built;
use crate::semantic::{argument, ClassId, ScopeId};
use ruff_python_ast::{self as ast};
use ruff_text_size::Ranged;
use std::rc::Rc;

impl<'p, 'a> Walker<'p, 'a> {
    /// What a user function returns, its parameters bound to this call's arguments.
    pub fn returns(
        &self,
        cur: &Cursor<'a>,
        call: &'a ast::ExprCall,
        fm: &'a Module<'a>,
        fs: ScopeId,
        method: bool,
        instance: Option<(&'a Module<'a>, ClassId, Built<'a>)>,
    ) -> Outcome<'a> {
        let mut env = Vec::new();
        if let Some((cm, class, built)) = instance {
            self.bind_init(&mut env, cm, class, built);
            self.bind_self(&mut env, fm, fs, built);
        }
        let caller = Cursor { path: Vec::new(), ..cur.clone() };
        self.bind_call(&mut env, fm, fs, call, &caller, method);
        self.function_returns(cur, fm, fs, Rc::new(env))
    }

    /// The `return` values of a function, each a possible source; for an item of a
    /// generator function's call (`for x, y in batches(…)`), the values it yields.
    pub fn function_returns(
        &self,
        cur: &Cursor<'a>,
        fm: &'a Module<'a>,
        fs: ScopeId,
        env: Rc<Vec<Alias<'a>>>,
    ) -> Outcome<'a> {
        let function = Project::function_name(fm, fs);
        if let (Some(yields), Some(Sel::Iter)) = (fm.index.yields.get(&fs), cur.first()) {
            let rest = cur.rest();
            let candidates = yields
                .iter()
                .map(|value| {
                    let draft = self.draft(fm, value.start(), Role::Move, format!("yielded by `{function}`"));
                    (
                        Some(draft),
                        Cursor { m: fm, scope: fs, expr: value, path: rest.clone(), env: env.clone() },
                    )
                })
                .collect();
            return self.fork(cur, cur.expr.start(), &format!("the yields of `{function}`"), candidates);
        }
        let Some(returns) = fm.sem.returns.get(&fs).filter(|r| !r.is_empty()) else {
            return self.end(
                cur,
                cur.expr.start(),
                format!("`{function}` returns nothing the analysis sees; not followed further"),
            );
        };
        let candidates = returns
            .iter()
            .map(|ret| {
                let draft = self.draft(fm, ret.start(), Role::Move, format!("returned by `{function}`"));
                (
                    Some(draft),
                    Cursor { m: fm, scope: fs, expr: ret, path: cur.path.clone(), env: env.clone() },
                )
            })
            .collect();
        self.fork(cur, cur.expr.start(), &format!("the returns of `{function}`"), candidates)
    }

    /// Binds a function's parameters to a call's arguments.
    pub fn bind_call(
        &self,
        env: &mut Vec<Alias<'a>>,
        fm: &'a Module<'a>,
        fs: ScopeId,
        call: &'a ast::ExprCall,
        caller: &Cursor<'a>,
        method: bool,
    ) {
        let Some(def) = fm.sem.function(fs) else { return };
        for (index, param) in def.parameters.iter_non_variadic_params().enumerate() {
            if method && index == 0 {
                continue;
            }
            let name = param.parameter.name.as_str();
            let position = param_position(index, method);
            let Some(arg) = argument(call, name, position) else { continue };
            let to = Cursor { expr: arg, path: Vec::new(), ..caller.clone() };
            env.push(Alias::parameter(fm, def.range, name, to));
        }
    }

    pub(super) fn lambda(
        &self,
        cur: &Cursor<'a>,
        call: &'a ast::ExprCall,
        lm: &'a Module<'a>,
        ls: ScopeId,
        lambda: &'a ast::ExprLambda,
    ) -> Outcome<'a> {
        let caller = Cursor { path: Vec::new(), ..cur.clone() };
        let env = lambda_env(&Cursor { m: lm, ..cur.clone() }, lambda, call, &caller);
        self.follow(Cursor { m: lm, scope: ls, expr: &lambda.body, path: cur.path.clone(), env })
    }
}
