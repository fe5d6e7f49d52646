//! A name read inside a lambda that is one of its parameters. Lambdas have no scope of
//! their own in the semantic model, so without this the name would be looked up around
//! the lambda (where a variable of the same name may live). A lambda given to a
//! DataLoader as `collate_fn` gets the list of samples of the loader's dataset.

use super::follow::{Cursor, Outcome, Sel, Walker};
use super::made;
use super::query::Role;
use super::resolve::Object;
use crate::semantic::argument;
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextSize};

impl<'p, 'a> Walker<'p, 'a> {
    /// `name` read at `at` when a lambda around it binds it: the samples of the DataLoader
    /// it collates for, else the end of the trail (a lambda's caller is not known).
    pub(super) fn lambda_parameter(&self, cur: &Cursor<'a>, name: &str, at: TextSize) -> Option<Outcome<'a>> {
        let m = cur.m;
        let stmt = m.index.statement_at(at)?;
        let calls = super::calls::calls_in(stmt);
        let binds = |lambda: &ast::ExprLambda| {
            lambda.range.contains(at)
                && lambda.parameters.as_ref().is_some_and(|p| p.iter().any(|p| p.name().as_str() == name))
        };
        let mut around = None;
        for call in &calls {
            let keywords =
                call.arguments.keywords.iter().map(|k| (k.arg.as_ref().map(|a| a.as_str()), &k.value));
            let positional = call.arguments.args.iter().map(|a| (None, a));
            for (keyword, value) in positional.chain(keywords) {
                let Expr::Lambda(lambda) = value else { continue };
                if !binds(lambda) {
                    continue;
                }
                // The innermost lambda binds it.
                if around
                    .is_some_and(|(_, l, _): (_, &ast::ExprLambda, _)| l.range.len() < lambda.range.len())
                {
                    continue;
                }
                around = Some((*call, lambda, keyword));
            }
        }
        let (call, lambda, keyword) = around?;
        let first = lambda.parameters.as_ref().and_then(|p| p.iter_non_variadic_params().next());
        let is_first = first.is_some_and(|p| p.parameter.name.as_str() == name);
        let loader = matches!(
            self.project.resolve(m, cur.scope, &call.func),
            Some(Object::Api("torch", "DataLoader"))
        );
        if keyword == Some("collate_fn") && loader && is_first {
            if let Some(dataset) = argument(call, "dataset", Some(0)) {
                // One element of the list is one sample of the dataset.
                let mut path = vec![Sel::Sample];
                match cur.first() {
                    Some(Sel::Iter | Sel::Elem | Sel::Index(_)) => path.extend(cur.rest()),
                    _ => {
                        return Some(self.end(
                            cur,
                            at,
                            format!(
                                "`{name}`, the list of samples the DataLoader collates; not followed further"
                            ),
                        ))
                    }
                }
                let note = format!(
                    "`{name}` is a list of samples of `{}`, given to the collate function",
                    made::text_of(m.file.text(), dataset)
                );
                let draft = self.draft(m, lambda.start(), Role::Unpack, note);
                return Some(self.then(draft, cur.at(dataset).with_path(path)));
            }
        }
        Some(self.end(
            cur,
            at,
            format!("`{name}` is a parameter of a lambda whose caller is not known; not followed further"),
        ))
    }
}
