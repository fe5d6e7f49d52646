//! The walk itself: a cursor (an expression, the part of its value followed, the names
//! bound around it) taken one proved step back at a time. Where the source leaves several
//! possible sources (two assignments, an `if`, several calls), each is followed; those that
//! provably cannot give the bad value are dropped, runtime observations choose among the
//! rest, and if more than one is left the trail ends there, saying so.

use super::made::{self, Values};
use super::project::{Module, Project};
use super::query::{Chain, Query, Role};
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

impl<'a> Alias<'a> {
    /// A function's parameter `name`, inside `within` of module `m`, bound at a known call to
    /// the value at `to`.
    pub fn parameter(m: &Module<'a>, within: TextRange, name: &'a str, to: Cursor<'a>) -> Alias<'a> {
        Alias { m, within, name, to, sel: Vec::new(), samples: false, param: true }
    }
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

    pub fn made(
        &self,
        cur: &Cursor<'a>,
        at: TextSize,
        note: impl Into<String>,
        values: Values,
    ) -> Outcome<'a> {
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
                Some(Sel::Key(_)) => match self.keyed_dict_comprehension(&cur, c) {
                    Some(next) => self.follow(next),
                    None => self.comprehension(&cur, &c.value, &c.generators, c.range),
                },
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
            format!(
                "`{text}` may come from {what} on several lines ({}); not followed further",
                lines.join(", ")
            )
        } else {
            format!("`{text}` may come from several sources ({what}); not followed further")
        };
        self.end(cur, at, note)
    }

    /// When every outcome was made on the same line (`(int(a), int(b))`), one of them.
    fn converging(&self, outcomes: &[Outcome<'a>]) -> Option<usize> {
        let made_at = |o: &Outcome<'a>| match o {
            Outcome::Made(steps, _) => {
                steps.last().map(|d| (d.m as *const Module as usize, d.m.file.line_of(d.at)))
            }
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
        fact_made(self, cur)
    }
}

/// Where a shape or dtype trail's fact was made: a call or subscript whose value has it
/// while its input has not.
fn fact_made<'a>(walker: &Walker<'_, 'a>, cur: &Cursor<'a>) -> Option<Outcome<'a>> {
    let want = walker.want;
    let m = cur.m;
    let input: &Expr = match cur.expr {
        Expr::Call(call) => match &*call.func {
            Expr::Attribute(attr) if m.sem.api(&call.func).is_none() => &attr.value,
            _ => call.arguments.args.first()?,
        },
        Expr::Subscript(sub) => &sub.value,
        _ => return None,
    };
    let has = |e: &'a Expr| m.flow.facts(e, cur.scope).has(want);
    let singleton_input = want == Facts::COLUMN && m.flow.facts(cur.expr, cur.scope).has(Facts::SINGLETON);
    if !(has(cur.expr) || singleton_input) || has(input) {
        return None;
    }
    let text = made::text_of(m.file.text(), cur.expr);
    let note = if want == Facts::ONE_HOT {
        format!("`{text}` makes one-hot rows [N, C] where class indices [N] are expected")
    } else if want == Facts::COLUMN && singleton_input {
        format!("`{text}` makes each sample a one-element tensor: batched, a column [N, 1]")
    } else if want == Facts::COLUMN {
        format!("`{text}` makes a column [N, 1] where [N] is expected")
    } else if want == Facts::FLOAT {
        format!("`{text}` makes it floating point where class indices (int64) are expected")
    } else {
        format!("`{text}` makes it int32 where int64 is expected")
    };
    Some(walker.made(cur, cur.expr.start(), note, Values::Unknown))
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
