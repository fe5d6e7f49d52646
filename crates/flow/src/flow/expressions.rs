//! The facts of an expression: literals, operators, subscripts, calls of torch functions and
//! tensor methods, dtypes.

use super::engine::Flow;
use crate::facts::Facts;
use crate::semantic::{argument, int_literal, ScopeId};
use ruff_python_ast::{self as ast, Expr, Operator};

impl<'a> Flow<'a> {
    pub(super) fn expr_facts(&self, expr: &'a Expr, scope: ScopeId, depth: u32) -> Facts {
        if !self.burn(depth) {
            return Facts::NONE;
        }
        match expr {
            Expr::Name(name) => match self.sem.lookup(scope, name.id.as_str(), name.range.start()) {
                Some((s, binding)) => {
                    self.bound_facts(&binding.value.clone(), s, name.id.as_str(), depth + 1)
                }
                None => Facts::NONE,
            },
            Expr::Attribute(attr) => {
                if let Some((s, bound)) = self.self_attr(attr, scope) {
                    return self.bound_facts(&bound, s, attr.attr.as_str(), depth + 1);
                }
                match attr.attr.as_str() {
                    "logits" => Facts::LOGITS,
                    "data" | "T" | "mT" => {
                        self.expr_facts(&attr.value, scope, depth + 1).only(Facts::CARRIED)
                    }
                    _ => Facts::NONE,
                }
            }
            Expr::Call(call) => self.call_facts(call, scope, depth + 1),
            Expr::Subscript(sub) => self.subscript_facts(sub, scope, depth + 1),
            Expr::BinOp(binop) => {
                let left = self.expr_facts(&binop.left, scope, depth + 1);
                let right = self.expr_facts(&binop.right, scope, depth + 1);
                let mut facts = (left | right).only(Facts(
                    Facts::ONE_HOT.0 | Facts::FLOAT.0 | Facts::COLUMN.0 | Facts::INT32.0 | Facts::LOGITS.0,
                ));
                if binop.op == Operator::Div
                    || is_float_literal(&binop.left)
                    || is_float_literal(&binop.right)
                {
                    facts = facts.with_dtype(Facts::FLOAT);
                }
                // `x @ w` is a linear layer written out; other arithmetic keeps what its operands are.
                if binop.op == Operator::MatMult {
                    facts = facts.with(Facts::LOGITS);
                }
                facts
            }
            Expr::If(if_expr) => {
                self.expr_facts(&if_expr.body, scope, depth + 1)
                    | self.expr_facts(&if_expr.orelse, scope, depth + 1)
            }
            Expr::Named(named) => self.expr_facts(&named.value, scope, depth + 1),
            _ => Facts::NONE,
        }
    }

    pub(super) fn subscript_facts(&self, sub: &'a ast::ExprSubscript, scope: ScopeId, depth: u32) -> Facts {
        // `eye(C)[y]` builds one-hot rows.
        if let Expr::Call(call) = &*sub.value {
            if let Some((root @ ("torch" | "numpy"), "eye")) = self.sem.api(&call.func) {
                let _ = root;
                return Facts::ONE_HOT | Facts::FLOAT;
            }
        }
        if let Some(index) = int_literal(&sub.slice).and_then(|i| usize::try_from(i).ok()) {
            let element = self.expr_element(&sub.value, &[index], scope, depth + 1);
            if element != Facts::NONE {
                return element;
            }
        }
        let facts = self.expr_facts(&sub.value, scope, depth + 1).only(Facts::CARRIED);
        if adds_axis(&sub.slice) {
            facts.with(Facts::COLUMN)
        } else {
            facts
        }
    }

    pub(super) fn call_facts(&self, call: &'a ast::ExprCall, scope: ScopeId, depth: u32) -> Facts {
        if let Some((root, name)) = self.sem.api(&call.func) {
            return self.api_call_facts(call, root, name, scope, depth);
        }
        if let Some(instance) = self.instance_at(&call.func, scope, depth + 1) {
            return self.module_output(instance, depth + 1);
        }
        match &*call.func {
            Expr::Attribute(attr) => match self.method_called(attr, scope, depth + 1) {
                Some(method) => {
                    let mut facts = Facts::NONE;
                    for ret in self.sem.returns.get(&method).into_iter().flatten() {
                        facts = facts | self.expr_facts(ret, method, depth + 1);
                    }
                    facts
                }
                None => self.method_facts(attr, call, scope, depth + 1),
            },
            // `self(x)` in a method runs the class's forward.
            Expr::Name(name) if name.id.as_str() == "self" => {
                let Some(forward) = self.sem.class_of(scope).and_then(|c| self.method(c, "forward")) else {
                    return Facts::NONE;
                };
                let mut facts = Facts::NONE;
                for ret in self.sem.returns.get(&forward).into_iter().flatten() {
                    facts = facts | self.expr_facts(ret, forward, depth + 1);
                }
                facts
            }
            Expr::Name(name) if self.sem.imports.contains_key(name.id.as_str()) => {
                match self.imported(name.id.as_str()) {
                    Some((module, function)) => {
                        module.functions.get(function).map_or(Facts::NONE, |f| f.returns)
                    }
                    None => Facts::NONE,
                }
            }
            Expr::Name(_) => {
                let mut facts = Facts::NONE;
                for (ret, ret_scope) in self.returns_of_call(call, scope, depth + 1) {
                    facts = facts | self.expr_facts(ret, ret_scope, depth + 1);
                }
                facts
            }
            _ => Facts::NONE,
        }
    }

    /// A call of a library function the module imports (`torch.softmax`, `np.array`).
    fn api_call_facts(
        &self,
        call: &'a ast::ExprCall,
        root: &str,
        name: &str,
        scope: ScopeId,
        depth: u32,
    ) -> Facts {
        let first_arg = || call.arguments.args.first().filter(|a| !a.is_starred_expr());
        let arg_facts = |e: Option<&'a Expr>| e.map_or(Facts::NONE, |e| self.expr_facts(e, scope, depth + 1));
        match (root, name) {
            ("torch", "one_hot") => Facts::ONE_HOT | Facts::INT64,
            ("torch", "sigmoid" | "expit") => Facts::PROB | Facts::NONNEG,
            ("torch", "softmax") => Facts::PROB | Facts::NONNEG | Facts::SOFTMAX,
            ("torch", "log_softmax") => Facts::LOG_PROB,
            ("torch", "randn" | "randn_like") => Facts::LOGITS | Facts::FLOAT,
            ("torch", "rand" | "rand_like") => Facts::PROB | Facts::NONNEG | Facts::FLOAT,
            ("torch", "exp" | "relu" | "abs" | "square") => {
                arg_facts(first_arg()).only(Facts::CARRIED).with_range(Facts::NONNEG)
            }
            ("torch", "argmax" | "argmin") => Facts::INT64,
            ("torch", "clamp" | "clip") => clamp_facts(call, arg_facts(first_arg())),
            ("torch", "squeeze" | "flatten" | "ravel") => arg_facts(first_arg()).without(Facts::COLUMN),
            ("torch", "unsqueeze") => unsqueezed(arg_facts(first_arg()), argument(call, "dim", Some(1))),
            ("torch", "IntTensor") => singleton(first_arg()) | Facts::INT32,
            ("torch", "LongTensor") => singleton(first_arg()) | Facts::INT64,
            ("torch", "tensor" | "as_tensor" | "from_numpy") => {
                let base = arg_facts(first_arg()).only(Facts::CARRIED) | singleton(first_arg());
                match call.arguments.find_keyword("dtype").map(|k| self.dtype(&k.value)) {
                    Some(Some(dtype)) => base.with_dtype(dtype),
                    Some(None) => base.without(Facts::DTYPES),
                    None => base,
                }
            }
            ("torch", "cat" | "stack") => match first_arg() {
                Some(Expr::List(ast::ExprList { elts, .. }) | Expr::Tuple(ast::ExprTuple { elts, .. })) => {
                    elts.iter()
                        .fold(Facts::NONE, |f, e| f | self.expr_facts(e, scope, depth + 1))
                        .only(Facts::CARRIED)
                }
                _ => Facts::NONE,
            },
            ("numpy", "array" | "asarray") => {
                let base = arg_facts(first_arg()).only(Facts::CARRIED);
                match call.arguments.find_keyword("dtype").map(|k| self.dtype(&k.value)) {
                    Some(Some(dtype)) => base.with_dtype(dtype),
                    Some(None) => base.without(Facts::DTYPES),
                    None => base,
                }
            }
            ("numpy", "int32") => Facts::INT32,
            _ => match self.instance_at(&call.func, scope, depth + 1) {
                Some(instance) => self.module_output(instance, depth + 1),
                None => Facts::NONE,
            },
        }
    }

    pub(super) fn method_facts(
        &self,
        attr: &'a ast::ExprAttribute,
        call: &'a ast::ExprCall,
        scope: ScopeId,
        depth: u32,
    ) -> Facts {
        let receiver = || self.expr_facts(&attr.value, scope, depth + 1).only(Facts::CARRIED);
        let args = &call.arguments.args;
        match attr.attr.as_str() {
            "to" | "type" | "astype" => {
                let dtype = argument(call, "dtype", Some(0)).map(|d| self.dtype(d));
                match dtype {
                    Some(Some(dtype)) => receiver().with_dtype(dtype),
                    _ => receiver(),
                }
            }
            "cuda" | "cpu" | "detach" | "clone" | "contiguous" | "requires_grad_" | "pin_memory"
            | "numpy" | "copy" | "tolist" => receiver(),
            "long" => receiver().with_dtype(Facts::INT64),
            "int" => receiver().with_dtype(Facts::INT32),
            "float" | "double" | "half" | "bfloat16" => receiver().with_dtype(Facts::FLOAT),
            "view" | "reshape" => {
                // The shape, given as arguments or as one tuple: `[N, 1]` only for a literal
                // last size of 1 after one other size.
                let dims: &[Expr] = match &args[..] {
                    [Expr::Tuple(t)] => &t.elts,
                    [Expr::List(l)] => &l.elts,
                    _ => args,
                };
                let column =
                    dims.len() == 2 && int_literal(&dims[1]) == Some(1) && int_literal(&dims[0]) != Some(1);
                if column {
                    receiver().with(Facts::COLUMN)
                } else {
                    receiver().without(Facts::COLUMN)
                }
            }
            "unsqueeze" => unsqueezed(receiver(), argument(call, "dim", Some(0))),
            "squeeze" | "flatten" | "ravel" | "view_as" | "reshape_as" => receiver().without(Facts::COLUMN),
            "softmax" => Facts::PROB | Facts::NONNEG | Facts::SOFTMAX,
            "log_softmax" => Facts::LOG_PROB,
            "sigmoid" => Facts::PROB | Facts::NONNEG,
            "exp" | "relu" | "abs" | "square" => receiver().with_range(Facts::NONNEG),
            "clamp" | "clip" | "clamp_" => clamp_facts(call, receiver()),
            "argmax" | "argmin" => Facts::INT64,
            _ => Facts::NONE,
        }
    }

    /// The dtype an expression names (`torch.int32`, `np.int32`, `"int32"`, `torch.long`, …);
    /// `None` for a dtype that matters to no rule or an unknown expression.
    pub(super) fn dtype(&self, expr: &Expr) -> Option<Facts> {
        let name = match expr {
            Expr::StringLiteral(s) => s.value.to_str(),
            Expr::Name(n) if n.id.as_str() == "int" => "int64",
            Expr::Name(n) if n.id.as_str() == "float" => "float64",
            _ => match self.sem.api(expr) {
                Some(("torch" | "numpy", name)) => name,
                _ => return None,
            },
        };
        match name {
            "int32"
            | "int"
            | "IntTensor"
            | "intc"
            | "torch.int32"
            | "torch.IntTensor"
            | "torch.cuda.IntTensor" => Some(Facts::INT32),
            "int64" | "long" | "LongTensor" | "torch.LongTensor" | "torch.cuda.LongTensor" => {
                Some(Facts::INT64)
            }
            "float" | "float32" | "float64" | "double" | "half" | "float16" | "bfloat16" | "FloatTensor"
            | "torch.FloatTensor" => Some(Facts::FLOAT),
            _ => None,
        }
    }
}

/// Methods that return the same module (`model.to(device)`, `model.cuda()`).
pub(super) const PASS_THROUGH_MODULE: &[&str] =
    &["to", "cuda", "cpu", "train", "eval", "float", "double", "half", "requires_grad_"];

/// `unsqueeze(dim)`: a new last axis (`1`, `-1`) turns `[N]` into the column `[N, 1]`; a new
/// first axis (`0`) makes a batch of one (`[1]` from a scalar label), which is no column.
pub(super) fn unsqueezed(input: Facts, dim: Option<&Expr>) -> Facts {
    match dim.and_then(int_literal) {
        Some(1 | -1) => input.with(Facts::COLUMN),
        _ => input.without(Facts::COLUMN),
    }
}

/// How a DataLoader's default collation changes a sample's facts: `[1]` samples stack to `[N, 1]`.
pub(super) fn batched(sample: Facts) -> Facts {
    if sample.has(Facts::SINGLETON) {
        sample.without(Facts::SINGLETON).with(Facts::COLUMN)
    } else {
        sample
    }
}

/// `torch.tensor([label])`: a one-element list makes a `[1]` tensor.
pub(super) fn singleton(arg: Option<&Expr>) -> Facts {
    match arg {
        Some(Expr::List(ast::ExprList { elts, .. })) if elts.len() == 1 && !elts[0].is_list_expr() => {
            Facts::SINGLETON
        }
        _ => Facts::NONE,
    }
}

pub(super) fn clamp_facts(call: &ast::ExprCall, input: Facts) -> Facts {
    let bound = |name: &str, position: usize| argument(call, name, Some(position));
    let is = |e: Option<&Expr>, v: f64| match e {
        Some(Expr::NumberLiteral(ast::ExprNumberLiteral { value: ast::Number::Float(f), .. })) => *f == v,
        Some(e) => int_literal(e) == Some(v as i64) && v.fract() == 0.0,
        None => false,
    };
    // The receiver form has no input argument: clamp(min, max); the function form clamp(x, min, max).
    let offset = usize::from(matches!(&*call.func, Expr::Attribute(_)) && call.arguments.args.len() < 3);
    let (min, max) = (bound("min", 1 - offset), bound("max", 2 - offset));
    let min_zero = min.is_some_and(|m| is(Some(m), 0.0) || is_small_positive(m));
    if min_zero && max.is_some_and(|m| is(Some(m), 1.0) || is_just_below_one(m)) {
        Facts::PROB | Facts::NONNEG | input.only(Facts::DTYPES)
    } else if min_zero {
        input.with_range(Facts::NONNEG)
    } else {
        input
    }
}

pub(super) fn float_value(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::NumberLiteral(ast::ExprNumberLiteral { value: ast::Number::Float(f), .. }) => Some(*f),
        Expr::BinOp(b) if b.op == Operator::Sub => {
            let literal = |e: &Expr| match e {
                Expr::NumberLiteral(ast::ExprNumberLiteral { value: ast::Number::Float(f), .. }) => Some(*f),
                _ => int_literal(e).map(|v| v as f64),
            };
            Some(literal(&b.left)? - literal(&b.right)?)
        }
        _ => None,
    }
}

pub(super) fn is_small_positive(expr: &Expr) -> bool {
    float_value(expr).is_some_and(|v| v > 0.0 && v < 0.5)
}

pub(super) fn is_just_below_one(expr: &Expr) -> bool {
    float_value(expr).is_some_and(|v| v > 0.5 && v <= 1.0)
}

pub(super) fn is_float_literal(expr: &Expr) -> bool {
    matches!(expr, Expr::NumberLiteral(ast::ExprNumberLiteral { value: ast::Number::Float(_), .. }))
}

/// `[:, None]`, `[..., None]`, `[:, np.newaxis]`.
pub(super) fn adds_axis(slice: &Expr) -> bool {
    let Expr::Tuple(tuple) = slice else { return false };
    tuple.elts.len() == 2
        && tuple.elts[0].is_slice_expr() | tuple.elts[0].is_ellipsis_literal_expr()
        && match &tuple.elts[1] {
            Expr::NoneLiteral(_) => true,
            Expr::Attribute(a) => a.attr.as_str() == "newaxis",
            _ => false,
        }
}

/// Names that say the value is raw logits.
pub(super) fn is_logits_name(name: &str) -> bool {
    name == "logits" || name.ends_with("_logits")
}
