//! What a slice needs of one module beyond its bindings, gathered in one pass: the
//! statement at each line, the conditional blocks (a binding inside one may not run), the
//! loops (a binding later in a loop reaches the top of the next iteration), and the
//! mutations of a container after it was bound (`y[40] = 4`, `labels.append(v)`,
//! `y += 1`, `mask.fill_(255)`).

use crate::semantic::{ScopeId, ScopeKind, Semantic, MODULE};
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange, TextSize};
use rustc_hash::FxHashMap;

/// What a container is named by: a local or global name, or an attribute of `self`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Holder<'a> {
    Name(ScopeId, &'a str),
    /// `self.attr` in a method of class `ClassId`.
    SelfAttr(usize, &'a str),
}

/// A change to a container's contents after it was bound.
#[derive(Debug, Clone, Copy)]
pub enum Mutation<'a> {
    /// `x[…] = value` (also `x[…] += value`: then `augmented`).
    ItemStore { target: &'a ast::ExprSubscript, value: &'a Expr, augmented: bool },
    /// `x.append(value)`, `x.insert(i, value)`, `x.add(value)`, `x.setdefault(k, value)`;
    /// with `key`, the container under that key: `x["ids"].append(value)`.
    Add { call: &'a ast::ExprCall, value: &'a Expr, key: Option<&'a str> },
    /// `x.extend(values)`, `x.update(values)`, `x += values` on a list.
    Extend { call: Option<&'a ast::ExprCall>, values: &'a Expr },
    /// An in-place tensor method: `x.fill_(255)`, `x.add_(1)`, `x.masked_fill_(m, -1)`.
    InPlace { call: &'a ast::ExprCall, method: &'a str },
}

#[derive(Debug, Clone, Copy)]
pub struct Mutated<'a> {
    pub at: TextRange,
    pub stmt: &'a Stmt,
    pub mutation: Mutation<'a>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// May not run: `if`/`elif`/`else`, `try`/`except`, `match` cases, comprehension
    /// conditions.
    Conditional,
    /// May run many times, or none: the body of `for` and `while`.
    Loop,
}

#[derive(Default)]
pub struct Index<'a> {
    /// Every statement, with its range, in source order (nested ones after their parent).
    pub statements: Vec<&'a Stmt>,
    pub blocks: Vec<(TextRange, BlockKind)>,
    pub mutations: FxHashMap<Holder<'a>, Vec<Mutated<'a>>>,
    /// `x += …` statements by where the binding they make starts to count (their end).
    pub augmented: FxHashMap<TextSize, &'a ast::StmtAugAssign>,
    /// The values each generator function yields (`yield x, y`), by its scope.
    pub yields: FxHashMap<ScopeId, Vec<&'a Expr>>,
    /// Function scopes by their definition's range, innermost last among overlapping ones.
    scopes: Vec<(TextRange, ScopeId)>,
}

impl<'a> Index<'a> {
    pub fn build(suite: &'a [Stmt], sem: &Semantic<'a>) -> Index<'a> {
        let mut scopes: Vec<(TextRange, ScopeId)> = Vec::new();
        for (id, scope) in sem.scopes.iter().enumerate() {
            match scope.kind {
                ScopeKind::Function { def, .. } => scopes.push((def.range, id)),
                ScopeKind::Class(c) => scopes.push((sem.classes[c].def.range, id)),
                ScopeKind::Module => {}
            }
        }
        scopes.sort_by_key(|(r, _)| (r.start(), std::cmp::Reverse(r.end())));
        let mut builder = Builder { index: Index { scopes, ..Index::default() }, sem, depth: 0 };
        builder.visit_body(suite);
        builder.index
    }

    /// The innermost function or class scope whose definition holds `offset`.
    pub fn scope_at(&self, offset: TextSize) -> ScopeId {
        self.scopes.iter().rev().find(|(r, _)| r.contains(offset)).map_or(MODULE, |(_, s)| *s)
    }

    /// The innermost statement holding `offset`.
    pub fn statement_at(&self, offset: TextSize) -> Option<&'a Stmt> {
        self.statements.iter().rev().find(|s| s.range().contains_inclusive(offset)).copied()
    }

    /// Whether a binding at `binding` may not have run when `used` runs: a conditional
    /// block or loop holds the binding but not the use.
    pub fn conditional(&self, binding: TextSize, used: TextSize) -> bool {
        self.blocks.iter().any(|(r, _)| r.contains(binding) && !r.contains(used))
    }

    /// The loops holding `offset`, innermost last.
    pub fn loops_around(&self, offset: TextSize) -> Vec<TextRange> {
        self.blocks
            .iter()
            .filter(|(r, k)| *k == BlockKind::Loop && r.contains(offset))
            .map(|(r, _)| *r)
            .collect()
    }

    pub fn mutations_of(&self, holder: &Holder<'a>) -> &[Mutated<'a>] {
        self.mutations.get(holder).map_or(&[], Vec::as_slice)
    }
}

/// Deeper nesting than this is not indexed (as in `semantic`).
const MAX_DEPTH: u32 = 200;

struct Builder<'a, 's> {
    index: Index<'a>,
    sem: &'s Semantic<'a>,
    depth: u32,
}

const IN_PLACE: &[&str] = &[
    "fill_",
    "zero_",
    "add_",
    "sub_",
    "mul_",
    "div_",
    "clamp_",
    "clip_",
    "masked_fill_",
    "index_fill_",
    "scatter_",
    "scatter_add_",
    "index_put_",
    "copy_",
    "random_",
    "uniform_",
    "normal_",
    "apply_",
    "map_",
    "remainder_",
    "floor_divide_",
    "abs_",
    "neg_",
    "round_",
];

impl<'a> Builder<'a, '_> {
    fn holder(&self, expr: &'a Expr, at: TextSize) -> Option<Holder<'a>> {
        match expr {
            Expr::Name(n) => Some(Holder::Name(self.index.scope_at(at), n.id.as_str())),
            Expr::Attribute(a) => match &*a.value {
                Expr::Name(base) if base.id.as_str() == "self" => {
                    let scope = self.index.scope_at(at);
                    Some(Holder::SelfAttr(self.sem.class_of(scope)?, a.attr.as_str()))
                }
                _ => None,
            },
            _ => None,
        }
    }

    fn add(&mut self, holder: Option<Holder<'a>>, stmt: &'a Stmt, at: TextRange, mutation: Mutation<'a>) {
        if let Some(h) = holder {
            self.index.mutations.entry(h).or_default().push(Mutated { at, stmt, mutation });
        }
    }

    /// `x[…] = v` with `x` a name or `self.attr` (the base of nested subscripts counts).
    fn item_store(&mut self, stmt: &'a Stmt, target: &'a Expr, value: &'a Expr, augmented: bool) {
        let Expr::Subscript(sub) = target else { return };
        let mut base = &*sub.value;
        while let Expr::Subscript(inner) = base {
            base = &inner.value;
        }
        let holder = self.holder(base, sub.range.start());
        self.add(holder, stmt, stmt.range(), Mutation::ItemStore { target: sub, value, augmented });
    }

    fn call_mutation(&mut self, stmt: &'a Stmt, call: &'a ast::ExprCall) {
        let Expr::Attribute(attr) = &*call.func else { return };
        let method = attr.attr.as_str();
        let args = &call.arguments.args;
        let mutation = match method {
            "append" | "add" if args.len() == 1 => Mutation::Add { call, value: &args[0], key: None },
            "insert" if args.len() == 2 => Mutation::Add { call, value: &args[1], key: None },
            "setdefault" if args.len() == 2 => Mutation::Add { call, value: &args[1], key: None },
            "extend" | "update" if args.len() == 1 => Mutation::Extend { call: Some(call), values: &args[0] },
            m if IN_PLACE.contains(&m) => Mutation::InPlace { call, method },
            _ => return,
        };
        // `x["ids"].append(v)`: a change of `x`, under the key "ids".
        if let (Mutation::Add { call, value, .. }, Expr::Subscript(sub)) = (mutation, &*attr.value) {
            if let Expr::StringLiteral(key) = &*sub.slice {
                if method == "append" {
                    let holder = self.holder(&sub.value, call.range().start());
                    let key = Some(key.value.to_str());
                    self.add(holder, stmt, stmt.range(), Mutation::Add { call, value, key });
                }
            }
            return;
        }
        let holder = self.holder(&attr.value, call.range().start());
        self.add(holder, stmt, stmt.range(), mutation);
    }

    fn block(&mut self, body: &'a [Stmt], kind: BlockKind) {
        if let (Some(first), Some(last)) = (body.first(), body.last()) {
            self.index.blocks.push((TextRange::new(first.start(), last.end()), kind));
        }
    }
}

impl<'a> Visitor<'a> for Builder<'a, '_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if self.depth > MAX_DEPTH {
            return;
        }
        self.depth += 1;
        self.index.statements.push(stmt);
        match stmt {
            Stmt::Assign(assign) => {
                for target in &assign.targets {
                    self.item_store(stmt, target, &assign.value, false);
                }
            }
            Stmt::AugAssign(assign) => {
                self.item_store(stmt, &assign.target, &assign.value, true);
                if matches!(&*assign.target, Expr::Name(_) | Expr::Attribute(_)) {
                    self.index.augmented.insert(assign.range.end(), assign);
                    if let Expr::Attribute(_) = &*assign.target {
                        let holder = self.holder(&assign.target, assign.range.start());
                        self.add(
                            holder,
                            stmt,
                            stmt.range(),
                            Mutation::Extend { call: None, values: &assign.value },
                        );
                    }
                }
            }
            Stmt::Expr(e) => {
                if let Expr::Call(call) = &*e.value {
                    self.call_mutation(stmt, call);
                }
            }
            Stmt::For(f) => {
                self.block(&f.body, BlockKind::Loop);
                self.block(&f.orelse, BlockKind::Conditional);
            }
            Stmt::While(w) => {
                self.block(&w.body, BlockKind::Loop);
                self.block(&w.orelse, BlockKind::Conditional);
            }
            Stmt::If(i) => {
                self.block(&i.body, BlockKind::Conditional);
                for clause in &i.elif_else_clauses {
                    self.block(&clause.body, BlockKind::Conditional);
                }
            }
            Stmt::Try(t) => {
                self.block(&t.body, BlockKind::Conditional);
                for handler in &t.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = handler;
                    self.block(&h.body, BlockKind::Conditional);
                }
                self.block(&t.orelse, BlockKind::Conditional);
            }
            Stmt::Match(m) => {
                for case in &m.cases {
                    self.block(&case.body, BlockKind::Conditional);
                }
            }
            _ => {}
        }
        visitor::walk_stmt(self, stmt);
        self.depth -= 1;
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if self.depth > MAX_DEPTH {
            return;
        }
        self.depth += 1;
        if let Expr::Yield(ast::ExprYield { value: Some(value), .. }) = expr {
            let scope = self.index.scope_at(expr.start());
            self.index.yields.entry(scope).or_default().push(value);
        }
        visitor::walk_expr(self, expr);
        self.depth -= 1;
    }
}
