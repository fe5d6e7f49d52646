//! Row trails: the batch dimension of a value, for a batch-size mismatch or a batch of
//! one sample. Layers, activations and element-wise arithmetic keep the rows of their
//! input; what sets them is a reshape with `-1` in the batch position, a tensor created
//! with an explicit size (an RNN's initial state), or a DataLoader's batch size.

use super::follow::{Cursor, Outcome, Walker};
use super::made::{self, Values};
use super::resolve::Object;
use super::Role;
use crate::semantic::{argument, int_literal};
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

/// Library functions and methods whose output has the rows of their first input.
const KEEP_ROWS: &[&str] = &[
    "relu",
    "relu_",
    "gelu",
    "silu",
    "tanh",
    "sigmoid",
    "softmax",
    "log_softmax",
    "dropout",
    "leaky_relu",
    "elu",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "avg_pool1d",
    "avg_pool2d",
    "adaptive_avg_pool2d",
    "layer_norm",
    "batch_norm",
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "normalize",
    "contiguous",
    "float",
    "to",
    "cuda",
    "cpu",
    "detach",
    "clone",
    "mean",
    "sum",
    "squeeze",
    "unsqueeze",
    "permute",
    "transpose",
    "exp",
    "log",
    "abs",
    "pad",
];

impl<'p, 'a> Walker<'p, 'a> {
    /// A rows step, when the cursor's expression is one a batch dimension passes through
    /// differently from a value.
    pub fn rows_step(&self, cur: &Cursor<'a>) -> Option<Outcome<'a>> {
        let m = cur.m;
        match cur.expr {
            // An RNN's state `(h0, c0)`: its first tensor, the one the error names.
            Expr::Tuple(t) if cur.path.is_empty() => t.elts.first().map(|e| self.follow(cur.at(e))),
            Expr::BinOp(b) => Some(self.follow(cur.at(&b.left))),
            Expr::Call(call) => {
                let object = self.project.resolve(m, cur.scope, &call.func);
                let first = || call.arguments.args.first().filter(|a| !a.is_starred_expr());
                match object {
                    Some(Object::LibraryInstance(_, class, _)) if !matches!(class, "DataLoader") => {
                        let input = first()?;
                        let note = format!(
                            "rows kept by `{}` (a `{class}`)",
                            made::text_of(m.file.text(), &call.func)
                        );
                        Some(self.then(self.draft(m, call.start(), Role::Move, note), cur.at(input)))
                    }
                    Some(Object::Api(_, name)) if KEEP_ROWS.contains(&name) => {
                        Some(self.follow(cur.at(first()?)))
                    }
                    Some(Object::Api(_, name)) if made::creator(name).is_some() => {
                        let text = made::text_of(m.file.text(), cur.expr);
                        Some(self.made(
                            cur,
                            call.start(),
                            format!("`{text}` fixes the batch size"),
                            Values::Unknown,
                        ))
                    }
                    None => self.rows_method(cur, call),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn rows_method(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall) -> Option<Outcome<'a>> {
        let Expr::Attribute(attr) = &*call.func else { return None };
        let m = cur.m;
        let method = attr.attr.as_str();
        if matches!(method, "view" | "reshape") {
            let dims: &[Expr] = match &call.arguments.args[..] {
                [Expr::Tuple(t)] => &t.elts,
                [Expr::List(l)] => &l.elts,
                args => args,
            };
            if dims.first().and_then(int_literal) == Some(-1) && dims.len() > 1 {
                let text = made::text_of(m.file.text(), cur.expr);
                let note = format!("`{text}` infers the rows from the element count: a wrong size after -1 changes the batch size");
                return Some(self.made(cur, call.start(), note, Values::Unknown));
            }
        }
        KEEP_ROWS.contains(&method).then(|| self.follow(cur.at(&attr.value)))
    }

    /// A DataLoader sets a batch's rows: its batch size, and the smaller last batch.
    pub fn loader_rows(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall) -> Outcome<'a> {
        let m = cur.m;
        let text = made::text_of(m.file.text(), cur.expr);
        let drop_last = call
            .arguments
            .find_keyword("drop_last")
            .is_some_and(|k| matches!(&k.value, Expr::BooleanLiteral(b) if b.value));
        let size = argument(call, "batch_size", Some(1))
            .map_or("1".to_string(), |b| made::text_of(m.file.text(), b));
        let note = if drop_last {
            format!("`{text}` makes batches of {size} rows")
        } else {
            format!("`{text}` makes batches of {size} rows, and a last batch of the samples left over (`drop_last=True` drops it)")
        };
        self.made(cur, call.start(), note, Values::Unknown)
    }
}
