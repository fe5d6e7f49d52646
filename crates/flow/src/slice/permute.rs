//! Values put back where they came from: `torch.zeros_like(p).scatter(-1, order, src)` with
//! `order` the indices of `p.sort(dim=-1)` writes every position of the result (the index
//! is a full permutation along that dimension of a tensor of the same shape), so the result
//! holds exactly the values of `src`, permuted; what the base was filled with is gone.

use super::follow::{Cursor, Outcome, Walker};
use super::made;
use super::query::Role;
use super::resolve::Object;
use crate::semantic::{argument, Bound};
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

impl<'p, 'a> Walker<'p, 'a> {
    /// `base.scatter(dim, order, src)` where `order` permutes `base`'s positions along `dim`:
    /// a move of `src`'s values. `None` when that is not proved.
    pub(super) fn scatter_of_permutation(
        &self,
        cur: &Cursor<'a>,
        call: &'a ast::ExprCall,
        base: &'a Expr,
    ) -> Option<Outcome<'a>> {
        let m = cur.m;
        let dim = argument(call, "dim", Some(0))?;
        let index = argument(call, "index", Some(1))?;
        let src = argument(call, "src", Some(2))?;
        let (sorted, sort_dim) = self.sort_indices(cur, index)?;
        let dim_value = made::number(dim)?;
        if sort_dim != Some(dim_value) && !(sort_dim.is_none() && dim_value == -1.0) {
            return None;
        }
        // The base has the shape of the sorted tensor: that tensor, or `torch.*_like(it)`.
        let same_shape = match base {
            Expr::Call(like) => {
                matches!(callee(like), Some(name) if name.ends_with("_like"))
                    && like.arguments.args.first().is_some_and(|a| self.same_binding(cur, a, sorted))
            }
            other => self.same_binding(cur, other, sorted),
        };
        if !same_shape {
            return None;
        }
        let text = made::text_of(m.file.text(), src);
        let note = format!(
            "every position is written with a value of `{text}` (`{}` is a permutation from a sort)",
            made::text_of(m.file.text(), index)
        );
        let next = cur.at(src).with_path(super::calls::reshaped(&cur.path));
        Some(self.then(self.draft(m, call.start(), Role::Move, note), next))
    }

    /// For `order` bound by `_, order = x.sort(dim=d)`, `torch.sort(x, d)`, or
    /// `order = x.argsort(d)`: the name `x` and the dimension (`None`: the default, -1).
    fn sort_indices(&self, cur: &Cursor<'a>, index: &'a Expr) -> Option<(&'a Expr, Option<f64>)> {
        let Expr::Name(name) = index else { return None };
        let (_, binding) = cur.m.sem.lookup(cur.scope, name.id.as_str(), name.range.start())?;
        let (call, want_indices) = match &binding.value {
            Bound::Element(inner, 1) => match &**inner {
                Bound::Value(Expr::Call(call)) => (call, true),
                _ => return None,
            },
            Bound::Value(Expr::Call(call)) => (call, false),
            _ => return None,
        };
        let function = callee(call)?;
        let wanted = if want_indices { "sort" } else { "argsort" };
        if function != wanted {
            return None;
        }
        let functional = matches!(self.project.resolve(cur.m, cur.scope, &call.func), Some(Object::Api(..)));
        let (sorted, dim) = match &*call.func {
            Expr::Attribute(a) if !functional => (&*a.value, argument(call, "dim", Some(0))),
            _ if functional => (call.arguments.args.first()?, argument(call, "dim", Some(1))),
            _ => return None,
        };
        let dim = match dim {
            Some(d) => Some(made::number(d)?),
            None => None,
        };
        matches!(sorted, Expr::Name(_)).then_some((sorted, dim))
    }
}

fn callee(call: &ast::ExprCall) -> Option<&str> {
    match &*call.func {
        Expr::Name(n) => Some(n.id.as_str()),
        Expr::Attribute(a) => Some(a.attr.as_str()),
        _ => None,
    }
}

impl<'p, 'a> Walker<'p, 'a> {
    /// Two names read the same binding (one tensor, not two of the same name).
    fn same_binding(&self, cur: &Cursor<'a>, a: &'a Expr, b: &'a Expr) -> bool {
        let (Expr::Name(x), Expr::Name(y)) = (a, b) else { return false };
        if x.id != y.id {
            return false;
        }
        let lookup = |n: &ast::ExprName| cur.m.sem.lookup(cur.scope, n.id.as_str(), n.range.start());
        match (lookup(x), lookup(y)) {
            (Some((_, p)), Some((_, q))) => std::ptr::eq(p, q),
            _ => false,
        }
    }
}
