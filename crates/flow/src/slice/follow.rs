//! The walk itself: a cursor (an expression, the part of its value followed, the names
//! bound around it) taken one proved step back at a time. Where the source leaves several
//! possible sources (two assignments, an `if`, several calls), each is followed; those that
//! provably cannot give the bad value are dropped, runtime observations choose among the
//! rest, and if more than one is left the trail ends there, saying so.

use super::made::{self, Values};
use super::project::{Module, Project};
use super::{Chain, End, Frame, Query, Role, Step, Trail};
use crate::facts::Facts;
use crate::semantic::ScopeId;
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextRange, TextSize};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// Which part of a value is followed: `batch[1]["ids"]` is `[Index(1), Key("ids")]` of
/// `batch`, applied first to last.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Sel {
    /// A tuple or list position (also a tensor row given by a literal).
    Index(i64),
    /// A dict key (a string literal).
    Key(String),
    /// One element, by an index or key the text does not fix (`labels[i]`, a tensor row).
    Elem,
    /// One item of iterating it (`for x in xs`): an element, a dict's key, a loader's batch.
    Iter,
    /// One sample of a dataset (`dataset[i]`).
    Sample,
    /// What calling it returns, at the call remembered under this number.
    Returned(usize),
}

/// A name bound around the cursor by what it came through: a comprehension's target, a
/// lambda's or `__init__`'s parameter given at a known call, a collate function's samples.
#[derive(Clone)]
pub struct Alias<'a> {
    pub m: *const Module<'a>,
    pub within: TextRange,
    pub name: &'a str,
    pub to: Cursor<'a>,
    /// Prepended to the path of what the name is followed for.
    pub sel: Vec<Sel>,
    /// The name is a list of the dataset's samples: its first selector picks one sample.
    pub samples: bool,
    /// A function's parameter given at a known call: it stands for the parameter's
    /// binding only, not for later assignments of the same name.
    pub param: bool,
}

#[derive(Clone)]
pub struct Cursor<'a> {
    pub m: &'a Module<'a>,
    pub scope: ScopeId,
    pub expr: &'a Expr,
    pub path: Vec<Sel>,
    pub env: Rc<Vec<Alias<'a>>>,
}

impl<'a> Cursor<'a> {
    pub fn at(&self, expr: &'a Expr) -> Cursor<'a> {
        Cursor { expr, ..self.clone() }
    }

    pub fn with_path(mut self, path: Vec<Sel>) -> Cursor<'a> {
        self.path = path;
        self
    }

    /// `sel` followed by this cursor's path.
    pub fn prefixed(&self, sel: &[Sel]) -> Vec<Sel> {
        let mut path = sel.to_vec();
        path.extend(self.path.iter().cloned());
        path
    }

    /// The path without its first selector.
    pub fn rest(&self) -> Vec<Sel> {
        self.path.iter().skip(1).cloned().collect()
    }

    pub fn first(&self) -> Option<&Sel> {
        self.path.first()
    }

}

/// One step before it is located.
#[derive(Clone)]
pub struct Draft<'a> {
    pub m: &'a Module<'a>,
    pub at: TextSize,
    pub role: Role,
    pub note: String,
    pub confirmed: bool,
    /// The runtime saw the bad value on this line (not only the line run): what chooses
    /// between two possible sources.
    pub observed: bool,
    pub chain: Chain,
}

pub enum Outcome<'a> {
    /// Followed to where the value was made: the steps, the last one made here.
    Made(Vec<Draft<'a>>, Values),
    /// Followed this far; `end` says where and why it stops.
    End(Vec<Draft<'a>>, Draft<'a>),
    /// This source cannot hold the value (an empty list, `None`, a loop back to itself).
    Dead,
}

impl<'a> Outcome<'a> {
    pub fn prepend(self, draft: Option<Draft<'a>>) -> Outcome<'a> {
        let Some(d) = draft else { return self };
        match self {
            Outcome::Made(mut steps, v) => {
                steps.insert(0, d);
                Outcome::Made(steps, v)
            }
            Outcome::End(mut steps, end) => {
                steps.insert(0, d);
                Outcome::End(steps, end)
            }
            Outcome::Dead => Outcome::Dead,
        }
    }

    fn steps(&self) -> &[Draft<'a>] {
        match self {
            Outcome::Made(s, _) | Outcome::End(s, _) => s,
            Outcome::Dead => &[],
        }
    }
}

/// How many cursors one query may visit: bounds the work on any input.
const FUEL: u32 = 20_000;
/// How deep one trail may go.
const MAX_DEPTH: usize = 64;

pub struct Walker<'p, 'a> {
    pub project: &'p Project<'a>,
    pub query: &'p Query,
    pub chain: Chain,
    /// For shape and dtype trails: the fact whose making is looked for.
    pub want: Facts,
    fuel: Cell<u32>,
    stack: RefCell<Vec<(usize, TextRange, Vec<Sel>)>>,
    /// Calls whose callee is followed as a value (`Sel::Returned`).
    calls: RefCell<Vec<(Cursor<'a>, &'a ast::ExprCall)>>,
}

impl<'p, 'a> Walker<'p, 'a> {
    pub fn new(project: &'p Project<'a>, query: &'p Query, chain: Chain) -> Walker<'p, 'a> {
        Walker {
            project,
            query,
            chain,
            want: Facts::NONE,
            fuel: Cell::new(FUEL),
            stack: RefCell::new(Vec::new()),
            calls: RefCell::new(Vec::new()),
        }
    }

    /// Remembers a call whose callee is followed as a value.
    pub fn remember_call(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall) -> usize {
        let mut calls = self.calls.borrow_mut();
        calls.push((Cursor { path: Vec::new(), ..cur.clone() }, call));
        calls.len() - 1
    }

    pub fn call_site(&self, id: usize) -> Option<(Cursor<'a>, &'a ast::ExprCall)> {
        self.calls.borrow().get(id).cloned()
    }

    pub fn draft(&self, m: &'a Module<'a>, at: TextSize, role: Role, note: impl Into<String>) -> Draft<'a> {
        let observed = self.observed(m, at);
        let confirmed = observed || self.on_stack(m, at);
        Draft { m, at, role, note: note.into(), confirmed, observed, chain: self.chain }
    }

    /// Whether the line is one of the failing call's stack.
    pub fn on_stack(&self, m: &Module<'a>, at: TextSize) -> bool {
        let line = m.file.line_of(at);
        self.query.frames.iter().any(|f| f.line == line && same_file(&f.file, m.path))
    }

    /// Whether the runtime saw a local hold the bad value after this line.
    pub fn observed(&self, m: &Module<'a>, at: TextSize) -> bool {
        let line = m.file.line_of(at);
        self.query.observed.lines.iter().any(|(p, l, _)| *l == line && same_file(p, m.path))
    }

    pub fn made(&self, cur: &Cursor<'a>, at: TextSize, note: impl Into<String>, values: Values) -> Outcome<'a> {
        Outcome::Made(vec![self.draft(cur.m, at, Role::Made, note)], values)
    }

    pub fn end(&self, cur: &Cursor<'a>, at: TextSize, note: impl Into<String>) -> Outcome<'a> {
        Outcome::End(Vec::new(), self.draft(cur.m, at, Role::Move, note))
    }

    /// Follows `cur` back to where its value was made.
    pub fn follow(&self, cur: Cursor<'a>) -> Outcome<'a> {
        let left = self.fuel.get();
        if left == 0 || self.stack.borrow().len() > MAX_DEPTH {
            return self.end(&cur, cur.expr.start(), "the trail is longer than the analysis follows");
        }
        self.fuel.set(left - 1);
        let key = (cur.m as *const Module as usize, cur.expr.range(), cur.path.clone());
        if self.stack.borrow().contains(&key) {
            return Outcome::Dead;
        }
        self.stack.borrow_mut().push(key);
        let outcome = self.step(cur);
        self.stack.borrow_mut().pop();
        outcome
    }

    /// Follows `next`, recording `draft` first.
    pub fn then(&self, draft: Draft<'a>, next: Cursor<'a>) -> Outcome<'a> {
        self.follow(next).prepend(Some(draft))
    }

    fn step(&self, cur: Cursor<'a>) -> Outcome<'a> {
        if let Some(found) = self.shape_made(&cur) {
            return found;
        }
        if self.query.rows {
            if let Some(found) = self.rows_step(&cur) {
                return found;
            }
        }
        if let Some(&Sel::Returned(id)) = cur.first() {
            if let Some(found) = self.returned(&cur, id) {
                return found;
            }
        }
        let expr = cur.expr;
        match expr {
            Expr::Name(name) => self.name(&cur, name),
            Expr::Attribute(attr) => self.attribute(&cur, attr),
            Expr::Subscript(sub) => self.subscript(&cur, sub),
            Expr::Call(call) => self.call(&cur, call),
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                self.sequence(&cur, elts)
            }
            Expr::Set(set) => self.sequence(&cur, &set.elts),
            Expr::Dict(dict) => self.dict(&cur, dict),
            Expr::ListComp(c) => self.comprehension(&cur, &c.elt, &c.generators, c.range),
            Expr::SetComp(c) => self.comprehension(&cur, &c.elt, &c.generators, c.range),
            Expr::Generator(c) => self.comprehension(&cur, &c.elt, &c.generators, c.range),
            Expr::DictComp(c) => match cur.first() {
                Some(Sel::Iter) => match &c.key {
                    Some(key) => self.comprehension(&cur, key, &c.generators, c.range),
                    None => self.end(&cur, c.start(), "a dict built with `**`; not followed further"),
                },
                _ => self.comprehension(&cur, &c.value, &c.generators, c.range),
            },
            Expr::Named(named) => self.follow(cur.at(&named.value)),
            Expr::If(if_expr) => {
                let branches = vec![(None, cur.at(&if_expr.body)), (None, cur.at(&if_expr.orelse))];
                self.fork(&cur, expr.start(), "a conditional expression", branches)
            }
            Expr::BoolOp(b) => {
                let branches = b.values.iter().map(|v| (None, cur.at(v))).collect();
                self.fork(&cur, expr.start(), "an `and`/`or`", branches)
            }
            Expr::Await(a) => self.follow(cur.at(&a.value)),
            Expr::NoneLiteral(_) | Expr::StringLiteral(_) | Expr::FString(_) | Expr::BytesLiteral(_) => {
                if matches!(self.chain, Chain::Value | Chain::Size) {
                    Outcome::Dead
                } else {
                    self.end(&cur, expr.start(), "a constant")
                }
            }
            _ => self.computed(&cur),
        }
    }

    /// An expression that computes its value: a literal, arithmetic, a comparison.
    fn computed(&self, cur: &Cursor<'a>) -> Outcome<'a> {
        let expr = cur.expr;
        let text = made::text_of(cur.m.file.text(), expr);
        if let Some(v) = made::number(expr) {
            return self.made(cur, expr.start(), self.constant_note(cur, &text), Values::exactly(v));
        }
        match expr {
            Expr::BinOp(binop) => self.arithmetic(cur, binop, &text),
            Expr::UnaryOp(_) => self.made(cur, expr.start(), format!("`{text}` computes it"), Values::Unknown),
            Expr::Compare(_) => {
                self.made(cur, expr.start(), format!("`{text}` computes it (a comparison: 0 or 1)"), Values::Range(Some(0.0), Some(1.0)))
            }
            Expr::BooleanLiteral(_) | Expr::NumberLiteral(_) => {
                self.made(cur, expr.start(), self.constant_note(cur, &text), made::constant_values(expr))
            }
            Expr::Lambda(_) => self.end(cur, expr.start(), format!("`{text}`, a function; not followed further")),
            _ => self.end(cur, expr.start(), format!("`{text}`: not followed further")),
        }
    }

    /// The number an expression holds when the module fixes it: a literal, a constant, the
    /// length of a literal list.
    pub fn constant(&self, cur: &Cursor<'a>, expr: &'a Expr) -> Option<f64> {
        if let Some(v) = made::number(expr) {
            return Some(v);
        }
        if let Some(v) = cur.m.flow.int_value(expr, cur.scope) {
            return Some(v as f64);
        }
        if let Expr::Name(name) = expr {
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
        let (Expr::Name(len), [Expr::Name(list)]) = (&*call.func, &call.arguments.args[..]) else { return None };
        if len.id.as_str() != "len" {
            return None;
        }
        let (_, binding) = cur.m.sem.lookup(cur.scope, list.id.as_str(), list.range.start())?;
        match binding.value {
            crate::semantic::Bound::Value(
                Expr::List(ast::ExprList { elts, .. }) | Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::Set(ast::ExprSet { elts, .. }),
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
                if std::ptr::eq(&*assign.value, cur.expr) && assign.targets.iter().any(Expr::is_subscript_expr) =>
            {
                let target = made::text_of(cur.m.file.text(), &assign.targets[0]);
                format!("`{target} = {text}` stores the constant {text}")
            }
            _ => format!("the constant {text}"),
        }
    }

    fn arithmetic(&self, cur: &Cursor<'a>, binop: &'a ast::ExprBinOp, text: &str) -> Outcome<'a> {
        use ast::Operator;
        let at = binop.start();
        if made::is_constant(cur.expr) {
            let note = format!("`{text}` builds the constant {}", made::text_of(cur.m.file.text(), constant_part(binop)));
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
    fn sequence(&self, cur: &Cursor<'a>, elts: &'a [Expr]) -> Outcome<'a> {
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
                    return self.made(cur, at, format!("the literal `{text}`"), made::constant_values(cur.expr));
                }
                let rest = if cur.path.is_empty() { Vec::new() } else { cur.rest() };
                let each = elts.iter().map(|e| (None, cur.at(e).with_path(rest.clone()))).collect();
                self.fork(cur, at, "the elements of a literal", each)
            }
        }
    }

    fn dict(&self, cur: &Cursor<'a>, dict: &'a ast::ExprDict) -> Outcome<'a> {
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
                let keys = dict.items.iter().filter_map(|i| i.key.as_ref()).map(|k| (None, cur.at(k).with_path(cur.rest()))).collect();
                self.fork(cur, at, "the keys of a literal", keys)
            }
            _ => {
                if dict.items.is_empty() {
                    return Outcome::Dead;
                }
                if made::is_constant(cur.expr) {
                    let text = made::text_of(cur.m.file.text(), cur.expr);
                    return self.made(cur, at, format!("the literal `{text}`"), made::constant_values(cur.expr));
                }
                let rest = if cur.path.is_empty() { Vec::new() } else { cur.rest() };
                let values = dict.items.iter().map(|i| (None, cur.at(&i.value).with_path(rest.clone()))).collect();
                self.fork(cur, at, "the values of a literal", values)
            }
        }
    }

    /// `[elt for target in iter if …]`: the element, with each target bound to an item of
    /// its iterable.
    fn comprehension(
        &self,
        cur: &Cursor<'a>,
        elt: &'a Expr,
        generators: &'a [ast::Comprehension],
        within: TextRange,
    ) -> Outcome<'a> {
        let mut env = (*cur.env).clone();
        for generator in generators {
            let iterable = Cursor { env: Rc::new(env.clone()), ..cur.at(&generator.iter).with_path(Vec::new()) };
            for (name, sel) in target_names(&generator.target) {
                let mut prefix = vec![Sel::Iter];
                prefix.extend(sel);
                env.push(Alias { m: cur.m, within, name, to: iterable.clone(), sel: prefix, samples: false, param: false });
            }
        }
        let rest = match cur.first() {
            Some(Sel::Index(_) | Sel::Elem | Sel::Iter | Sel::Key(_)) => cur.rest(),
            _ => cur.path.clone(),
        };
        self.follow(Cursor { env: Rc::new(env), ..cur.at(elt).with_path(rest) })
    }

    /// Several possible sources: those that cannot give the value are dropped, runtime
    /// observations choose among the rest; if several remain the trail ends here.
    pub fn fork(
        &self,
        cur: &Cursor<'a>,
        at: TextSize,
        what: &str,
        candidates: Vec<(Option<Draft<'a>>, Cursor<'a>)>,
    ) -> Outcome<'a> {
        if candidates.len() == 1 {
            let (draft, next) = candidates.into_iter().next().unwrap();
            return self.follow(next).prepend(draft);
        }
        let outcomes = candidates.into_iter().map(|(draft, next)| self.follow(next).prepend(draft)).collect();
        self.pick(cur, at, what, outcomes)
    }

    /// Of several outcomes, the one that can have given the value (see [`Self::fork`]).
    pub fn pick(&self, cur: &Cursor<'a>, at: TextSize, what: &str, all: Vec<Outcome<'a>>) -> Outcome<'a> {
        let mut outcomes: Vec<Outcome<'a>> = all
            .into_iter()
            .filter(|outcome| match outcome {
                Outcome::Dead => false,
                Outcome::Made(_, values) => values.may_give(&self.query.bad),
                Outcome::End(..) => true,
            })
            .collect();
        match outcomes.len() {
            0 => return Outcome::Dead,
            1 => return outcomes.pop().unwrap(),
            _ => {}
        }
        let observed: Vec<usize> =
            (0..outcomes.len()).filter(|&i| outcomes[i].steps().iter().any(|d| d.observed)).collect();
        if observed.len() == 1 {
            return outcomes.swap_remove(observed[0]);
        }
        if let Some(same) = self.converging(&outcomes) {
            return outcomes.swap_remove(same);
        }
        let lines: Vec<String> = {
            let mut lines: Vec<String> = outcomes
                .iter()
                .filter_map(|o| o.steps().last().map(|d| d.m.file.line_of(d.at).to_string()))
                .collect();
            lines.dedup();
            lines
        };
        let text = made::text_of(cur.m.file.text(), cur.expr);
        let note = if lines.len() > 1 {
            format!("`{text}` may come from {what} on several lines ({}); not followed further", lines.join(", "))
        } else {
            format!("`{text}` may come from several sources ({what}); not followed further")
        };
        self.end(cur, at, note)
    }

    /// When every outcome was made on the same line (`(int(a), int(b))`), one of them.
    fn converging(&self, outcomes: &[Outcome<'a>]) -> Option<usize> {
        let made_at = |o: &Outcome<'a>| match o {
            Outcome::Made(steps, _) => steps.last().map(|d| (d.m as *const Module as usize, d.m.file.line_of(d.at))),
            _ => None,
        };
        let first = made_at(&outcomes[0])?;
        outcomes.iter().all(|o| made_at(o) == Some(first)).then_some(0)
    }

    /// For shape and dtype trails: the call that gave the value the wanted fact, when its
    /// input did not have it (`.view(-1, 1)`, `one_hot`, `dtype=torch.float32`).
    fn shape_made(&self, cur: &Cursor<'a>) -> Option<Outcome<'a>> {
        // A dtype holds for every element; a shape only for the whole value.
        if self.want == Facts::NONE || (self.chain == Chain::Shape && !cur.path.is_empty()) {
            return None;
        }
        super::size::fact_made(self, cur)
    }
}

/// The names an assignment target binds, with where each sits in the value.
pub fn target_names(target: &Expr) -> Vec<(&str, Vec<Sel>)> {
    let mut out = Vec::new();
    fn walk<'e>(e: &'e Expr, prefix: Vec<Sel>, out: &mut Vec<(&'e str, Vec<Sel>)>) {
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

/// Whether two paths name the same file (one may be relative to the working directory).
pub fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    if a == b {
        return true;
    }
    let absolute = |p: &std::path::Path| -> Option<std::path::PathBuf> {
        if p.is_absolute() {
            Some(p.to_path_buf())
        } else {
            std::env::current_dir().ok().map(|d| d.join(p))
        }
    };
    match (absolute(a), absolute(b)) {
        (Some(a), Some(b)) => normalize(&a) == normalize(&b),
        _ => false,
    }
}

fn normalize(path: &std::path::Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The trail of the value at the innermost frame's line.
pub fn value_trail(project: &Project<'_>, query: &Query) -> Trail {
    let Some(frame) = query.frames.first() else { return Trail::default() };
    let Some(m) = project.module(&frame.file) else { return Trail::default() };
    let chain = query.chain.unwrap_or(Chain::Value);
    let mut walker = Walker::new(project, query, chain);
    let starts = match super::start::operand(&walker, m, frame) {
        Ok(starts) => starts,
        Err(end) => return Trail { steps: Vec::new(), end: Some(located(&end, frame)) },
    };
    walker.want = super::size::wanted_fact(&walker, &starts);
    let first = starts[0].cursor().clone();
    let at = first.expr.start();
    let outcomes: Vec<Outcome<'_>> = starts
        .into_iter()
        .map(|start| match start {
            super::start::Start::Expr(c) => walker.follow(c),
            super::start::Start::Name(c, name, at) => walker.name_at(&c, &name, at),
        })
        .collect();
    let outcome = walker.pick(&first, at, "the holders of the value", outcomes);
    to_trail(outcome, frame)
}

/// Steps located; those on the starting line are left out unless the value was made there.
pub fn to_trail(outcome: Outcome<'_>, frame: &Frame) -> Trail {
    let (drafts, end) = match outcome {
        Outcome::Made(steps, _) => (steps, None),
        Outcome::End(steps, end) => (steps, Some(end)),
        Outcome::Dead => (Vec::new(), None),
    };
    let mut steps: Vec<Step> = Vec::new();
    for draft in drafts {
        let step = locate(&draft);
        let on_start = step.line == frame.line && same_file(&step.path, &frame.file);
        if on_start && step.role != Role::Made {
            continue;
        }
        match steps.last_mut() {
            Some(last) if last.line == step.line && last.path == step.path => {
                if step.role > last.role {
                    last.role = step.role;
                    last.note = step.note;
                    last.chain = step.chain;
                }
                last.confirmed |= step.confirmed;
            }
            _ => steps.push(step),
        }
    }
    let end = end.map(|e| located(&e, frame));
    Trail { steps, end }
}

fn locate(draft: &Draft<'_>) -> Step {
    let m = draft.m;
    let line = m.file.line_of(draft.at);
    let span = m.file.line_span(line);
    let code = m.file.text()[span].trim().to_string();
    let scope = m.index.scope_at(draft.at);
    Step {
        file: m.display.clone(),
        path: m.path.to_path_buf(),
        line,
        function: Project::function_name(m, enclosing_function(m, scope)),
        code,
        role: draft.role,
        chain: draft.chain,
        note: draft.note.clone(),
        confirmed: draft.confirmed,
    }
}

/// The function scope holding `scope` (a class body counts as `<module>`'s).
fn enclosing_function(m: &Module<'_>, scope: ScopeId) -> ScopeId {
    let mut s = Some(scope);
    while let Some(id) = s {
        if matches!(m.sem.scopes[id].kind, crate::semantic::ScopeKind::Function { .. }) {
            return id;
        }
        s = m.sem.scopes[id].parent;
    }
    crate::semantic::MODULE
}

fn located(end: &Draft<'_>, _frame: &Frame) -> End {
    let step = locate(end);
    End { file: step.file, path: step.path, line: step.line, function: step.function, code: step.code, note: step.note }
}
