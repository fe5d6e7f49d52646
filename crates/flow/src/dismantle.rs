//! Frees a syntax tree of any depth on a small, fixed stack. Dropping a tree recurses once
//! per nesting level, and generated or hostile code nests millions of levels deep (a
//! million unary minuses is a 2 MB file): such a tree is taken apart first, every subtree
//! below a fixed depth cut off and freed on its own, so that no drop and no walk goes
//! deeper than that depth, whatever the file. No stack is reserved in proportion to the
//! file (an address-space limit, `ulimit -v`, refused such a reservation).

use ruff_python_ast::visitor::transformer::{walk_expr, walk_pattern, walk_stmt, Transformer};
use ruff_python_ast::{Expr, ExprNoneLiteral, ModModule, Pattern, PatternMatchAs, Stmt, StmtPass};
use std::cell::{Cell, RefCell};

/// The depth at which subtrees are cut off: shallow enough that walking or dropping this
/// many levels fits any thread's stack (a few hundred bytes a level), deep enough that real
/// code is never cut.
const CUT: u32 = 200;

/// A subtree cut off, to be freed on its own.
enum Cut {
    Expr(Expr),
    Stmt(Stmt),
    Pattern(Pattern),
}

#[derive(Default)]
struct Dismantler {
    depth: Cell<u32>,
    cut: RefCell<Vec<Cut>>,
}

impl Dismantler {
    /// Runs `walk` one level deeper, or cuts the node off when that is too deep.
    fn enter<T>(&self, node: &mut T, placeholder: fn() -> T, into: fn(T) -> Cut, walk: impl FnOnce(&mut T)) {
        if self.depth.get() >= CUT {
            let subtree = std::mem::replace(node, placeholder());
            self.cut.borrow_mut().push(into(subtree));
            return;
        }
        self.depth.set(self.depth.get() + 1);
        walk(node);
        self.depth.set(self.depth.get() - 1);
    }
}

impl Transformer for Dismantler {
    fn visit_expr(&self, expr: &mut Expr) {
        self.enter(expr, || Expr::NoneLiteral(ExprNoneLiteral::default()), Cut::Expr, |e| walk_expr(self, e));
    }

    fn visit_stmt(&self, stmt: &mut Stmt) {
        let pass = || Stmt::Pass(StmtPass { node_index: Default::default(), range: Default::default() });
        self.enter(stmt, pass, Cut::Stmt, |s| walk_stmt(self, s));
    }

    fn visit_pattern(&self, pattern: &mut Pattern) {
        let wildcard = || {
            Pattern::MatchAs(PatternMatchAs {
                node_index: Default::default(),
                range: Default::default(),
                pattern: None,
                name: None,
            })
        };
        self.enter(pattern, wildcard, Cut::Pattern, |p| walk_pattern(self, p));
    }
}

/// Frees `module`, cutting it into subtrees no deeper than [`CUT`] levels first.
pub fn drop_deep(module: ModModule) {
    let dismantler = Dismantler::default();
    let mut body = module.body;
    for stmt in &mut body {
        dismantler.visit_stmt(stmt);
    }
    drop(body);
    loop {
        let Some(mut cut) = dismantler.cut.borrow_mut().pop() else { break };
        match &mut cut {
            Cut::Expr(e) => dismantler.visit_expr(e),
            Cut::Stmt(s) => dismantler.visit_stmt(s),
            Cut::Pattern(p) => dismantler.visit_pattern(p),
        }
        drop(cut);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses and frees code nested far deeper than [`CUT`], on a thread with a stack of
    /// 1 MiB (unoptimised builds take a few kilobytes a level): the walk and every drop stay
    /// within it, whatever the depth of the file.
    #[test]
    fn frees_a_tree_nested_a_hundred_thousand_levels_on_a_small_stack() {
        for text in [
            "x = ".to_string() + &"-".repeat(100_000) + "1",
            "x = ".to_string() + &"(".repeat(50_000) + &")".repeat(50_000),
        ] {
            let parsed =
                ruff_python_parser::parse_unchecked_source(&text, ruff_python_ast::PySourceType::Python);
            let module = parsed.into_syntax();
            std::thread::Builder::new()
                .stack_size(1 << 20)
                .spawn(move || drop_deep(module))
                .unwrap()
                .join()
                .unwrap();
        }
    }
}
