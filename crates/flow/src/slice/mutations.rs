//! Changes to a container after it was bound: item stores (`y[40] = 4`, `masks[m] = 255`),
//! `append`/`insert`/`extend`/`setdefault`, in-place tensor methods (`fill_`, `add_`), and
//! `x += …` on an attribute. Each is a possible source of the values the trail follows.

use super::follow::{Cursor, Outcome, Sel, Walker};
use super::index::{Holder, Mutated, Mutation};
use super::made::{self, Values};
use super::query::Role;
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{TextRange, TextSize};

impl<'p, 'a> Walker<'p, 'a> {
    /// Changes to a container between its binding and the use (anywhere, for a global or
    /// an attribute), and later in a loop around the use.
    pub(super) fn mutations(
        &self,
        cur: &Cursor<'a>,
        holder: &Holder<'a>,
        after: Option<TextSize>,
        used: TextSize,
        local: bool,
        out: &mut Vec<Outcome<'a>>,
    ) {
        let m = cur.m;
        let loops = m.index.loops_around(used);
        for mutated in m.index.mutations_of(holder) {
            let at = mutated.at.start();
            let reaches = if local {
                (after.is_none_or(|a| at >= a) && at < used)
                    || loops.iter().any(|l| l.contains(at) && at >= used)
            } else {
                true
            };
            if !reaches || mutated.at.contains(used) {
                continue;
            }
            if let Some(outcome) = self.mutation(cur, mutated) {
                out.push(outcome);
            }
        }
    }

    /// Where the values a mutation put in come from, for the path followed.
    fn mutation(&self, cur: &Cursor<'a>, mutated: &Mutated<'a>) -> Option<Outcome<'a>> {
        let m = cur.m;
        let at = mutated.at.start();
        let scope = m.index.scope_at(at);
        // The names bound around the cursor (a collate function's samples) hold here too.
        let here = |expr: &'a Expr, path: Vec<Sel>| Cursor { m, scope, expr, path, env: cur.env.clone() };
        let stmt_text = made::text_of(m.file.text(), statement_text(mutated.stmt));
        let changes = |what: String| self.made(cur, at, what, Values::Unknown);
        let follow = |note: String, next: Cursor<'a>| self.then(self.draft(m, at, Role::Store, note), next);
        Some(match mutated.mutation {
            Mutation::ItemStore { target, value, augmented } => {
                if let (Some(Sel::Key(k)), Expr::StringLiteral(s)) = (cur.first(), &*target.slice) {
                    if s.value.to_str() != k {
                        return None;
                    }
                }
                if augmented {
                    return Some(changes(format!("`{stmt_text}` changes the values it selects")));
                }
                let path = match (cur.first(), &*target.slice) {
                    (Some(Sel::Key(_)), Expr::StringLiteral(_)) => cur.rest(),
                    _ => cur.path.iter().skip(1).cloned().collect(),
                };
                follow(format!("`{stmt_text}` stores into it"), here(value, path))
            }
            Mutation::Add { value, key: None, .. } => {
                follow(format!("`{stmt_text}` adds to it"), here(value, cur.rest()))
            }
            // `x["ids"].append(v)`: an element of `x["ids"]`.
            Mutation::Add { value, key: Some(key), .. } => match cur.first() {
                Some(Sel::Key(k)) if k == key => follow(
                    format!("`{stmt_text}` adds to it"),
                    here(value, cur.path.iter().skip(2).cloned().collect()),
                ),
                _ => return None,
            },
            Mutation::Extend { values, call: Some(_) } => {
                follow(format!("`{stmt_text}` adds to it"), here(values, cur.path.clone()))
            }
            Mutation::Extend { values, call: None } => {
                follow(format!("`{stmt_text}` adds to it"), here(values, cur.path.clone()))
            }
            Mutation::InPlace { call, method } => {
                let args = &call.arguments.args;
                match method {
                    "fill_" | "index_fill_" | "masked_fill_" | "copy_" | "scatter_" | "scatter_add_"
                    | "index_put_" => match args.last() {
                        Some(v) => follow(format!("`{stmt_text}` writes into it"), here(v, cur.path.clone())),
                        None => return None,
                    },
                    _ => changes(format!("`{stmt_text}` changes it in place")),
                }
            }
        })
    }
}

/// The expression a mutation statement is about (for its text).
fn statement_text(stmt: &Stmt) -> &Expr {
    match stmt {
        Stmt::Expr(e) => &e.value,
        Stmt::Assign(a) => a.targets.first().map_or(&*a.value, |t| t),
        Stmt::AugAssign(a) => &a.target,
        _ => unreachable_expr(),
    }
}

fn unreachable_expr() -> &'static Expr {
    static NONE: std::sync::OnceLock<Expr> = std::sync::OnceLock::new();
    NONE.get_or_init(|| {
        Expr::NoneLiteral(ast::ExprNoneLiteral {
            node_index: Default::default(),
            range: TextRange::default(),
        })
    })
}
