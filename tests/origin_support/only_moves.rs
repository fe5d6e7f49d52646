//! Whether a source line only moves a value: its statement, parsed, does nothing but
//! assign, unpack, read, move to a device, cast, reshape or copy values that already
//! exist. A "made here" step on such a line is wrong, whatever the engine thought; this is
//! decided from the statement alone, independently of the engine's rules.

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{Expr, Stmt};
use ruff_text_size::{Ranged, TextSize};

/// Methods that move, cast, reshape or copy a value without computing a new one.
const MOVES: &[&str] = &[
    "to",
    "cuda",
    "cpu",
    "long",
    "int",
    "float",
    "double",
    "half",
    "bfloat16",
    "type",
    "astype",
    "view",
    "reshape",
    "squeeze",
    "unsqueeze",
    "flatten",
    "permute",
    "transpose",
    "t",
    "contiguous",
    "clone",
    "detach",
    "numpy",
    "tolist",
    "item",
    "pin_memory",
    "copy",
    "view_as",
    "reshape_as",
    "ravel",
    "to_numpy",
];
/// Functions that only wrap a value in another container or tensor.
const WRAPS: &[&str] =
    &["tensor", "as_tensor", "from_numpy", "array", "asarray", "list", "tuple", "LongTensor"];

/// Whether `line` (1-based) of `source` holds a statement that only moves values.
pub fn only_moves(source: &str, line: usize) -> bool {
    let parsed = ruff_python_parser::parse_module(source).expect("the file parses");
    let offset = line_start(source, line);
    let Some(stmt) = innermost(parsed.suite(), offset) else { return false };
    match stmt {
        Stmt::Assign(a) => moves(&a.value),
        Stmt::AnnAssign(a) => a.value.as_deref().is_none_or(moves),
        Stmt::Return(r) => r.value.as_deref().is_none_or(moves),
        Stmt::For(f) => moves(&f.iter),
        Stmt::Expr(e) => match &*e.value {
            Expr::Call(call) => {
                matches!(&*call.func, Expr::Attribute(a) if matches!(a.attr.as_str(), "append" | "extend"))
                    && call.arguments.args.iter().all(moves)
            }
            other => moves(other),
        },
        _ => false,
    }
}

fn moves(expr: &Expr) -> bool {
    match expr {
        Expr::Name(_) => true,
        Expr::Attribute(a) => moves(&a.value),
        Expr::Starred(s) => moves(&s.value),
        Expr::Tuple(t) => !t.elts.is_empty() && t.elts.iter().all(moves),
        Expr::List(l) => !l.elts.is_empty() && l.elts.iter().all(moves),
        Expr::Subscript(s) => moves(&s.value) && index(&s.slice),
        Expr::Call(call) => {
            let args_plain = call.arguments.args.iter().all(|a| moves(a) || literal(a))
                && call.arguments.keywords.iter().all(|k| moves(&k.value) || literal(&k.value));
            match &*call.func {
                Expr::Attribute(a) if MOVES.contains(&a.attr.as_str()) => moves(&a.value) && args_plain,
                Expr::Attribute(a) if WRAPS.contains(&a.attr.as_str()) => {
                    call.arguments.args.first().is_some_and(moves) && args_plain
                }
                Expr::Name(n) if WRAPS.contains(&n.id.as_str()) => {
                    call.arguments.args.first().is_some_and(moves) && args_plain
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// An index that selects, not computes: a name, a literal position or key, a slice.
fn index(slice: &Expr) -> bool {
    match slice {
        Expr::Tuple(t) => t.elts.iter().all(index),
        Expr::Slice(s) => {
            [&s.lower, &s.upper, &s.step].iter().all(|b| b.as_deref().is_none_or(|e| literal(e) || moves(e)))
        }
        other => literal(other) || moves(other),
    }
}

fn literal(expr: &Expr) -> bool {
    match expr {
        Expr::NumberLiteral(_)
        | Expr::StringLiteral(_)
        | Expr::BooleanLiteral(_)
        | Expr::NoneLiteral(_)
        | Expr::EllipsisLiteral(_) => true,
        Expr::UnaryOp(u) => literal(&u.operand),
        _ => false,
    }
}

fn line_start(source: &str, line: usize) -> TextSize {
    let mut offset = 0;
    for (i, text) in source.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            offset += text.len() - text.trim_start().len();
            break;
        }
        offset += text.len();
    }
    TextSize::try_from(offset).unwrap()
}

fn innermost(suite: &[Stmt], offset: TextSize) -> Option<&Stmt> {
    struct Find<'a> {
        offset: TextSize,
        found: Option<&'a Stmt>,
    }
    impl<'a> Visitor<'a> for Find<'a> {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if stmt.range().contains_inclusive(self.offset) {
                self.found = Some(stmt);
                visitor::walk_stmt(self, stmt);
            }
        }
    }
    let mut find = Find { offset, found: None };
    find.visit_body(suite);
    find.found
}
