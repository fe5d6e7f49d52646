//! Reading literals and call arguments off the AST.

use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextSize};

/// The value of a literal `int` (also `-1`).
pub fn int_literal(expr: &Expr) -> Option<i64> {
    let (negative, literal) = match expr {
        Expr::UnaryOp(ast::ExprUnaryOp { op: ast::UnaryOp::USub, operand, .. }) => (true, &**operand),
        _ => (false, expr),
    };
    match literal {
        Expr::NumberLiteral(ast::ExprNumberLiteral { value: ast::Number::Int(int), .. }) => {
            int.as_i64().map(|v| if negative { -v } else { v })
        }
        _ => None,
    }
}

/// Whether an expression is the literal zero (`0`, `0.0`).
pub fn is_zero_literal(expr: &Expr) -> bool {
    match expr {
        Expr::NumberLiteral(ast::ExprNumberLiteral { value: ast::Number::Int(int), .. }) => {
            int.as_i64() == Some(0)
        }
        Expr::NumberLiteral(ast::ExprNumberLiteral { value: ast::Number::Float(f), .. }) => *f == 0.0,
        _ => false,
    }
}

/// The argument of a call given by keyword `name` or at `position`.
pub fn argument<'a>(call: &'a ast::ExprCall, name: &str, position: Option<usize>) -> Option<&'a Expr> {
    if let Some(kw) = call.arguments.find_keyword(name) {
        return Some(&kw.value);
    }
    let position = position?;
    let args = &call.arguments.args;
    if args.iter().take(position + 1).any(|a| a.is_starred_expr()) {
        return None;
    }
    args.get(position)
}

/// The offset where an expression starts.
pub fn start(expr: &Expr) -> TextSize {
    expr.range().start()
}
