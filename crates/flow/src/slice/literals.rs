//! Values written in the source: literals and constants, arithmetic, tuples, lists, dicts
//! and comprehensions, each taken apart by the part of the value followed (`Sel`).

use super::follow::{Alias, Cursor, Outcome, Sel, Walker};
use super::made::{self, Values};
use ruff_python_ast::{self as ast, Expr, Operator};
use ruff_text_size::{Ranged, TextRange};
use std::rc::Rc;

impl<'p, 'a> Walker<'p, 'a> {
    /// An expression that computes its value: a literal, arithmetic, a comparison.
    pub(super) fn computed(&self, cur: &Cursor<'a>) -> Outcome<'a> {
        let expr = cur.expr;
        let text = made::text_of(cur.m.file.text(), expr);
        if let Some(v) = made::number(expr) {
            return self.made(cur, expr.start(), self.constant_note(cur, &text), Values::exactly(v));
        }
        match expr {
            Expr::BinOp(binop) => self.arithmetic(cur, binop, &text),
            Expr::UnaryOp(_) => {
                self.made(cur, expr.start(), format!("`{text}` computes it"), Values::Unknown)
            }
            Expr::Compare(_) => self.made(
                cur,
                expr.start(),
                format!("`{text}` computes it (a comparison: 0 or 1)"),
                Values::Range(Some(0.0), Some(1.0)),
            ),
            Expr::BooleanLiteral(_) | Expr::NumberLiteral(_) => {
                self.made(cur, expr.start(), self.constant_note(cur, &text), made::constant_values(expr))
            }
            Expr::Lambda(_) => {
                self.end(cur, expr.start(), format!("`{text}`, a function; not followed further"))
            }
            _ => self.end(cur, expr.start(), format!("`{text}`: not followed further")),
        }
    }

    /// The number an expression holds when the module fixes it: a literal, a constant, the
    /// length of a literal list.
    pub fn constant(&self, cur: &Cursor<'a>, expr: &'a Expr) -> Option<f64> {
        self.constant_at(cur, expr, 0)
    }

    fn constant_at(&self, cur: &Cursor<'a>, expr: &'a Expr, depth: u32) -> Option<f64> {
        if let Some(v) = made::number(expr) {
            return Some(v);
        }
        if let Some(v) = cur.m.flow.int_value(expr, cur.scope) {
            return Some(v as f64);
        }
        if let Expr::Name(name) = expr {
            // `from .features import HOURS = 7 * 24`: the constant of the module it comes from.
            if let Some(from) = cur.m.sem.imports.get(name.id.as_str()).and_then(|i| i.from) {
                if depth > 4 {
                    return None;
                }
                let path = crate::imports::module_path(cur.m.path, from.level, from.module)?;
                let other = self.project.module(&path)?;
                let end = other.file.suite().last().map(|s| s.end())? + ruff_text_size::TextSize::from(1);
                let (_, binding) = other.sem.lookup(crate::semantic::MODULE, from.name, end)?;
                let crate::semantic::Bound::Value(value) = &binding.value else { return None };
                let there = Cursor {
                    m: other,
                    scope: crate::semantic::MODULE,
                    env: Default::default(),
                    ..cur.clone()
                };
                return self.constant_at(&there, value, depth + 1);
            }
            // `A, B = 100, 32`: an element of a literal tuple.
            let (_, binding) = cur.m.sem.lookup(cur.scope, name.id.as_str(), name.range.start())?;
            if let crate::semantic::Bound::Element(inner, i) = &binding.value {
                if let crate::semantic::Bound::Value(Expr::Tuple(ast::ExprTuple { elts, .. })) = &**inner {
                    return elts.get(*i).and_then(made::number);
                }
            }
            return None;
        }
        let Expr::Call(call) = expr else { return None };
        let (Expr::Name(len), [Expr::Name(list)]) = (&*call.func, &call.arguments.args[..]) else {
            return None;
        };
        if len.id.as_str() != "len" {
            return None;
        }
        let (_, binding) = cur.m.sem.lookup(cur.scope, list.id.as_str(), list.range.start())?;
        match binding.value {
            crate::semantic::Bound::Value(
                Expr::List(ast::ExprList { elts, .. })
                | Expr::Tuple(ast::ExprTuple { elts, .. })
                | Expr::Set(ast::ExprSet { elts, .. }),
            ) if !elts.iter().any(Expr::is_starred_expr) => Some(elts.len() as f64),
            crate::semantic::Bound::Value(Expr::Dict(dict)) if dict.items.iter().all(|i| i.key.is_some()) => {
                Some(dict.items.len() as f64)
            }
            _ => None,
        }
    }

    /// The note of a constant: what holds it (`labels[mask] = -1` stores it).
    pub fn constant_note(&self, cur: &Cursor<'a>, text: &str) -> String {
        match cur.m.index.statement_at(cur.expr.start()) {
            Some(ast::Stmt::Assign(assign))
                if std::ptr::eq(&*assign.value, cur.expr)
                    && assign.targets.iter().any(Expr::is_subscript_expr) =>
            {
                let target = made::text_of(cur.m.file.text(), &assign.targets[0]);
                format!("`{target} = {text}` stores the constant {text}")
            }
            _ => format!("the constant {text}"),
        }
    }

    pub(super) fn arithmetic(&self, cur: &Cursor<'a>, binop: &'a ast::ExprBinOp, text: &str) -> Outcome<'a> {
        let at = binop.start();
        if made::is_constant(cur.expr) {
            let note = format!(
                "`{text}` builds the constant {}",
                made::text_of(cur.m.file.text(), constant_part(binop))
            );
            return self.made(cur, at, note, made::constant_values(cur.expr));
        }
        // `xs + [-1] * n`: a list extended with a constant: either side may hold the value.
        if binop.op == Operator::Add && (is_list_like(&binop.left) || is_list_like(&binop.right)) {
            let sides = vec![(None, cur.at(&binop.left)), (None, cur.at(&binop.right))];
            return self.fork(cur, at, "a concatenation", sides);
        }
        let left = match self.constant(cur, &binop.left) {
            Some(v) => Values::exactly(v),
            None => Values::Unknown,
        };
        let values = made::arithmetic_values(binop, left, &|e| self.constant(cur, e));
        let operand = made::text_of(cur.m.file.text(), &binop.right);
        let note = match binop.op {
            Operator::Add | Operator::Sub if made::number(&binop.right).is_some() => {
                let sign = if binop.op == Operator::Add { "+" } else { "-" };
                format!("`{text}` shifts every value by {sign}{operand}")
            }
            Operator::Add => format!("`{text}` adds `{operand}` to every value"),
            Operator::Sub => format!("`{text}` subtracts `{operand}` from every value"),
            Operator::Mult => format!("`{text}` multiplies every value by `{operand}`"),
            Operator::Mod => format!("`{text}` wraps the values to [0, {operand})"),
            Operator::Div | Operator::FloorDiv => {
                format!("`{text}` divides by `{operand}`: inf or NaN where it is 0, and no probabilities")
            }
            _ => format!("`{text}` computes it"),
        };
        self.made(cur, at, note, values)
    }

    /// A tuple, list or set: the element the path picks, or each element.
    pub(super) fn sequence(&self, cur: &Cursor<'a>, elts: &'a [Expr]) -> Outcome<'a> {
        let at = cur.expr.start();
        match cur.first() {
            Some(Sel::Index(i)) => {
                if elts.iter().any(Expr::is_starred_expr) {
                    return self.end(cur, at, "a sequence with `*` unpacking; not followed further");
                }
                let i = if *i < 0 { elts.len() as i64 + i } else { *i };
                match usize::try_from(i).ok().and_then(|i| elts.get(i)) {
                    Some(elt) => self.follow(cur.at(elt).with_path(cur.rest())),
                    None => Outcome::Dead,
                }
            }
            Some(Sel::Key(_)) | Some(Sel::Returned(_)) => Outcome::Dead,
            _ => {
                if elts.is_empty() {
                    return Outcome::Dead;
                }
                if made::is_constant(cur.expr) {
                    let text = made::text_of(cur.m.file.text(), cur.expr);
                    return self.made(
                        cur,
                        at,
                        format!("the literal `{text}`"),
                        made::constant_values(cur.expr),
                    );
                }
                let rest = if cur.path.is_empty() { Vec::new() } else { cur.rest() };
                let each = elts.iter().map(|e| (None, cur.at(e).with_path(rest.clone()))).collect();
                self.fork(cur, at, "the elements of a literal", each)
            }
        }
    }

    pub(super) fn dict(&self, cur: &Cursor<'a>, dict: &'a ast::ExprDict) -> Outcome<'a> {
        let at = cur.expr.start();
        match cur.first() {
            Some(Sel::Key(k)) => {
                let found = dict.items.iter().rev().find(|item| match &item.key {
                    Some(Expr::StringLiteral(s)) => s.value.to_str() == k,
                    _ => false,
                });
                match found {
                    Some(item) => self.follow(cur.at(&item.value).with_path(cur.rest())),
                    None if dict.items.iter().any(|i| i.key.is_none()) => {
                        self.end(cur, at, format!("a dict built with `**`: `{k}` not followed further"))
                    }
                    None => Outcome::Dead,
                }
            }
            Some(Sel::Iter) => {
                let keys = dict
                    .items
                    .iter()
                    .filter_map(|i| i.key.as_ref())
                    .map(|k| (None, cur.at(k).with_path(cur.rest())))
                    .collect();
                self.fork(cur, at, "the keys of a literal", keys)
            }
            _ => {
                if dict.items.is_empty() {
                    return Outcome::Dead;
                }
                if made::is_constant(cur.expr) {
                    let text = made::text_of(cur.m.file.text(), cur.expr);
                    return self.made(
                        cur,
                        at,
                        format!("the literal `{text}`"),
                        made::constant_values(cur.expr),
                    );
                }
                let rest = if cur.path.is_empty() { Vec::new() } else { cur.rest() };
                let values =
                    dict.items.iter().map(|i| (None, cur.at(&i.value).with_path(rest.clone()))).collect();
                self.fork(cur, at, "the values of a literal", values)
            }
        }
    }

    /// `[elt for target in iter if …]`: the element, with each target bound to an item of
    /// its iterable.
    /// `{k: f(v) for k, v in d.items()}` followed for key `x`: `f(v)` with `v` standing for
    /// `d[x]` (the key is kept, not widened to any value of `d`).
    pub(super) fn keyed_dict_comprehension(
        &self,
        cur: &Cursor<'a>,
        c: &'a ast::ExprDictComp,
    ) -> Option<Cursor<'a>> {
        let Some(Sel::Key(key)) = cur.first() else { return None };
        let [generator] = &c.generators[..] else { return None };
        if !generator.ifs.is_empty() || generator.is_async {
            return None;
        }
        let Expr::Tuple(target) = &generator.target else { return None };
        let [Expr::Name(k), Expr::Name(v)] = &target.elts[..] else { return None };
        let Some(Expr::Name(key_expr)) = c.key.as_deref() else { return None };
        if key_expr.id != k.id {
            return None;
        }
        let Expr::Call(items) = &generator.iter else { return None };
        let Expr::Attribute(attr) = &*items.func else { return None };
        if attr.attr.as_str() != "items" || !items.arguments.is_empty() {
            return None;
        }
        let mut env = (*cur.env).clone();
        env.push(Alias {
            m: cur.m,
            within: c.range,
            name: v.id.as_str(),
            to: Cursor { env: cur.env.clone(), ..cur.at(&attr.value).with_path(Vec::new()) },
            sel: vec![Sel::Key(key.clone())],
            samples: false,
            param: false,
        });
        Some(Cursor { env: Rc::new(env), ..cur.at(&c.value).with_path(cur.rest()) })
    }

    pub(super) fn comprehension(
        &self,
        cur: &Cursor<'a>,
        elt: &'a Expr,
        generators: &'a [ast::Comprehension],
        within: TextRange,
    ) -> Outcome<'a> {
        let mut env = (*cur.env).clone();
        for generator in generators {
            let iterable =
                Cursor { env: Rc::new(env.clone()), ..cur.at(&generator.iter).with_path(Vec::new()) };
            for (name, sel) in target_names(&generator.target) {
                let mut prefix = vec![Sel::Iter];
                prefix.extend(sel);
                env.push(Alias {
                    m: cur.m,
                    within,
                    name,
                    to: iterable.clone(),
                    sel: prefix,
                    samples: false,
                    param: false,
                });
            }
        }
        // A list used as a dataset: one sample is one element.
        let rest = match cur.first() {
            Some(Sel::Index(_) | Sel::Elem | Sel::Iter | Sel::Key(_) | Sel::Sample) => cur.rest(),
            _ => cur.path.clone(),
        };
        self.follow(Cursor { env: Rc::new(env), ..cur.at(elt).with_path(rest) })
    }
}

/// The names an assignment target binds, with where each sits in the value.
pub fn target_names(target: &Expr) -> Vec<(&str, Vec<Sel>)> {
    let mut out = Vec::new();
    pub(super) fn walk<'e>(e: &'e Expr, prefix: Vec<Sel>, out: &mut Vec<(&'e str, Vec<Sel>)>) {
        match e {
            Expr::Name(n) => out.push((n.id.as_str(), prefix)),
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                if elts.iter().any(Expr::is_starred_expr) {
                    return;
                }
                for (i, elt) in elts.iter().enumerate() {
                    let mut p = prefix.clone();
                    p.push(Sel::Index(i as i64));
                    walk(elt, p, out);
                }
            }
            _ => {}
        }
    }
    walk(target, Vec::new(), &mut out);
    out
}

fn is_list_like(expr: &Expr) -> bool {
    matches!(expr, Expr::List(_) | Expr::ListComp(_))
        || matches!(expr, Expr::BinOp(b) if b.op == ast::Operator::Mult && (is_list_like(&b.left) || is_list_like(&b.right)))
}

fn constant_part(binop: &ast::ExprBinOp) -> &Expr {
    if made::is_constant(&binop.left) {
        &binop.left
    } else {
        &binop.right
    }
}
