//! Row trails: the batch dimension of a value, for a batch-size mismatch or a batch of
//! one sample. Layers, activations and element-wise arithmetic keep the rows of their
//! input; what sets them is a reshape with `-1` in the batch position, a tensor created
//! with an explicit size (an RNN's initial state), or a DataLoader's batch size.

use super::follow::{Cursor, Outcome, Sel, Walker};
use super::made::{self, Values};
use super::query::Role;
use super::resolve::Object;
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
                    // `out, h = rnn(x, h0)`: the state returned has the shape of the state
                    // passed in (without one, the input's batch, as for any layer).
                    Some(Object::LibraryInstance("torch", class @ ("RNN" | "GRU" | "LSTM"), _))
                        if cur.first() == Some(&Sel::Index(1)) && rnn_state(call).is_some() =>
                    {
                        let state = rnn_state(call)?;
                        let note = format!(
                            "the state `{}` returns has the shape of the state passed in (a `{class}`)",
                            made::text_of(m.file.text(), &call.func)
                        );
                        let next = cur.at(state).with_path(cur.rest());
                        Some(self.then(self.draft(m, call.start(), Role::Move, note), next))
                    }
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
                        if let Some(found) = self.rows_from_size_argument(cur, call, name) {
                            return Some(found);
                        }
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

    /// A creator given its batch size by a name (`torch.zeros(1, batch, 8)`): when the
    /// refused batch size is known and exactly one size argument can be it (the others are
    /// constants of other values), the rows come from that argument, followed like a value.
    fn rows_from_size_argument(
        &self,
        cur: &Cursor<'a>,
        call: &'a ast::ExprCall,
        creator: &str,
    ) -> Option<Outcome<'a>> {
        let [batch] = self.query.bad.values[..] else { return None };
        let sizes: Vec<&'a Expr> = match call.arguments.args.first()? {
            Expr::Tuple(t) => t.elts.iter().collect(),
            Expr::List(l) => l.elts.iter().collect(),
            _ if creator.ends_with("_like") => return None,
            _ => {
                let args = &call.arguments.args;
                let count = if creator == "full" { args.len().saturating_sub(1) } else { args.len() };
                args.iter().take(count).collect()
            }
        };
        if sizes.iter().any(|s| s.is_starred_expr()) {
            return None;
        }
        let can_be: Vec<&'a Expr> =
            sizes.into_iter().filter(|s| self.constant(cur, s).is_none_or(|v| v == batch)).collect();
        let [size] = can_be[..] else { return None };
        if made::number(size).is_some() {
            return None;
        }
        let m = cur.m;
        let note = format!(
            "`{}` takes its batch size ({}) from `{}`",
            made::text_of(m.file.text(), cur.expr),
            made::show(batch),
            made::text_of(m.file.text(), size)
        );
        Some(self.then(self.draft(m, call.start(), Role::Move, note), cur.at(size).with_path(Vec::new())))
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

/// The initial state given to an RNN's call (`rnn(x, h0)`, `rnn(x, hx=h0)`).
fn rnn_state(call: &ast::ExprCall) -> Option<&Expr> {
    argument(call, "hx", Some(1)).filter(|a| !a.is_starred_expr() && !a.is_none_literal_expr())
}
