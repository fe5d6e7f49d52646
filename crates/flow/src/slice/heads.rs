//! The layer that makes a model's scores (the number of classes a loss's input scores):
//! followed from the scores through names, parameters whose callers all agree, a model's
//! `forward` (and the local layers it calls), the last layer of a Sequential, row
//! selections, activations, matrix products and device moves, to a torch layer built with
//! the size, or a weight built by hand (`nn.Parameter(torch.Tensor(n_in, n_out))`).

use super::follow::Walker;
use super::project::Module;
use super::resolve::{Built, Object};
use crate::semantic::{argument, Bound, ClassId, ScopeId};
use ruff_python_ast::{self as ast, Expr, Operator};

/// How deep the search goes.
const MAX_DEPTH: u32 = 16;

/// A local layer class built by a known call: its `__init__` parameters are that call's
/// arguments.
pub type Owner<'a> = (&'a Module<'a>, ClassId, Built<'a>);

/// The construction that sets the number of scores.
#[derive(Clone, Copy)]
pub struct Head<'a> {
    pub m: &'a Module<'a>,
    pub scope: ScopeId,
    /// The layer's constructor call, or the creator of a hand-built weight.
    pub ctor: &'a ast::ExprCall,
    /// The torch class (`Linear`, `Conv2d`), or `Parameter` for a hand-built weight.
    pub class: &'static str,
    /// The local layer whose `__init__` built it, when entered through a known instance.
    pub owner: Option<Owner<'a>>,
}

impl<'a> Head<'a> {
    /// The argument that sets the number of scores.
    pub fn size_expr(&self) -> Option<&'a Expr> {
        if self.class != "Parameter" {
            return argument(self.ctor, "out_features", Some(1));
        }
        let args = &self.ctor.arguments.args;
        if args.iter().any(Expr::is_starred_expr) {
            return None;
        }
        match args.first()? {
            Expr::Tuple(t) => t.elts.last(),
            Expr::List(l) => l.elts.last(),
            _ => args.last(),
        }
    }
}

/// Functions whose output has the columns of their first input.
const KEEP_COLUMNS: &[&str] =
    &["log_softmax", "softmax", "relu", "dropout", "elu", "leaky_relu", "gelu", "tanh", "sigmoid"];

/// Methods whose output has the columns of their receiver.
const KEEP_COLUMNS_METHODS: &[&str] = &[
    "log_softmax",
    "softmax",
    "float",
    "to",
    "cuda",
    "squeeze",
    "transpose",
    "permute",
    "relu",
    "contiguous",
];

/// The layer that makes `expr`'s scores (its last dimension).
pub fn head<'a>(
    walker: &Walker<'_, 'a>,
    m: &'a Module<'a>,
    scope: ScopeId,
    expr: &'a Expr,
    depth: u32,
    owner: Option<Owner<'a>>,
) -> Option<Head<'a>> {
    if depth > MAX_DEPTH {
        return None;
    }
    let next = |m: &'a Module<'a>, scope: ScopeId, e: &'a Expr| head(walker, m, scope, e, depth + 1, owner);
    match expr {
        Expr::Name(name) => {
            let (s, binding) = m.sem.lookup(scope, name.id.as_str(), name.range.start())?;
            match &binding.value {
                Bound::Value(v) => next(m, s, v),
                // `out, y = out[mask], y[mask]`: one element of a literal tuple.
                Bound::Element(inner, i) => match &**inner {
                    Bound::Value(Expr::Tuple(ast::ExprTuple { elts, .. }))
                        if !elts.iter().any(Expr::is_starred_expr) =>
                    {
                        next(m, s, elts.get(*i)?)
                    }
                    _ => None,
                },
                // A parameter: the head of what its callers pass, when they all agree.
                Bound::Param { scope: function, index, name: param, .. } => {
                    let method = m.sem.class_of(*function).is_some();
                    let position = super::calls::param_position(*index, method);
                    let mut found: Option<Head<'a>> = None;
                    for (cm, cscope, call) in walker.callers(m, *function) {
                        let arg = argument(call, param, position)?;
                        let layer = head(walker, cm, cscope, arg, depth + 1, None)?;
                        match found {
                            None => found = Some(layer),
                            Some(seen) if std::ptr::eq(seen.ctor, layer.ctor) => {}
                            Some(_) => return None,
                        }
                    }
                    found
                }
                _ => None,
            }
        }
        // A selection of rows (`out[mask]`, `out[idx]`) keeps the columns.
        Expr::Subscript(sub) if !sub.slice.is_tuple_expr() && !sub.slice.is_slice_expr() => {
            next(m, scope, &sub.value)
        }
        // `x @ w`: the columns of `w`; `scores + bias`: those of the scores.
        Expr::BinOp(b) if b.op == Operator::MatMult => next(m, scope, &b.right),
        Expr::BinOp(b) if matches!(b.op, Operator::Add | Operator::Sub | Operator::Mult | Operator::Div) => {
            next(m, scope, &b.left)
        }
        Expr::Attribute(_) => weight(walker, m, scope, expr, owner),
        Expr::Call(call) => call_head(walker, m, scope, call, depth, owner),
        _ => None,
    }
}

fn call_head<'a>(
    walker: &Walker<'_, 'a>,
    m: &'a Module<'a>,
    scope: ScopeId,
    call: &'a ast::ExprCall,
    depth: u32,
    owner: Option<Owner<'a>>,
) -> Option<Head<'a>> {
    let next =
        |m: &'a Module<'a>, scope: ScopeId, e: &'a Expr, owner| head(walker, m, scope, e, depth + 1, owner);
    let args = &call.arguments.args;
    let object = walker.project.resolve(m, scope, &call.func).or_else(|| match &*call.func {
        Expr::Name(name) => passed_object(walker, m, scope, name, 0),
        _ => None,
    });
    match object {
        Some(Object::LibraryInstance(_, _, built)) => {
            layer_head(walker, built.m, built.scope, &call.func, depth + 1)
        }
        Some(Object::Instance(cm, class, built)) => {
            let (fm, forward) = walker.project.method_of(cm, class, "forward")?;
            let inner = built.map(|b| (cm, class, b)).or(owner);
            match fm.sem.returns.get(&forward)?.as_slice() {
                [only] => next(fm, forward, only, inner),
                _ => None,
            }
        }
        Some(Object::Api(_, name)) if KEEP_COLUMNS.contains(&name) => next(m, scope, args.first()?, owner),
        // Matrix products: the columns of the right operand.
        Some(Object::Api(_, "mm" | "matmul" | "spmm" | "bmm")) => next(m, scope, args.get(1)?, owner),
        None => match &*call.func {
            Expr::Attribute(a) if KEEP_COLUMNS_METHODS.contains(&a.attr.as_str()) => {
                next(m, scope, &a.value, owner)
            }
            _ => None,
        },
        _ => None,
    }
}

/// `self.weight` of a layer built by hand: `nn.Parameter(torch.Tensor(n_in, n_out))`.
fn weight<'a>(
    walker: &Walker<'_, 'a>,
    m: &'a Module<'a>,
    scope: ScopeId,
    expr: &'a Expr,
    owner: Option<Owner<'a>>,
) -> Option<Head<'a>> {
    let Some(Object::LibraryInstance("torch", "Parameter", built)) = walker.project.resolve(m, scope, expr)
    else {
        return None;
    };
    let mut data = argument(built.call, "data", Some(0))?;
    // `torch.randn(n_in, n_out) * 0.01`: the creator's shape.
    while let Expr::BinOp(b) = data {
        data = &b.left;
    }
    let Expr::Call(creator) = data else { return None };
    let creates = matches!(
        walker.project.resolve(built.m, built.scope, &creator.func),
        Some(Object::Api("torch", "Tensor" | "FloatTensor" | "empty" | "zeros" | "ones" | "randn" | "rand"))
    );
    creates.then_some(Head { m: built.m, scope: built.scope, ctor: creator, class: "Parameter", owner })
}

/// The linear or convolution layer a module expression is, or ends with.
fn layer_head<'a>(
    walker: &Walker<'_, 'a>,
    m: &'a Module<'a>,
    scope: ScopeId,
    layer: &'a Expr,
    depth: u32,
) -> Option<Head<'a>> {
    if depth > MAX_DEPTH {
        return None;
    }
    let Some(Object::LibraryInstance(_, class, built)) = walker.project.resolve(m, scope, layer) else {
        return None;
    };
    if let Some(c) =
        ["Linear", "LazyLinear", "Bilinear", "Conv1d", "Conv2d", "Conv3d"].into_iter().find(|c| *c == class)
    {
        return Some(Head { m: built.m, scope: built.scope, ctor: built.call, class: c, owner: None });
    }
    if class == "Sequential" {
        let args = &built.call.arguments.args;
        if args.iter().any(Expr::is_starred_expr) {
            return None;
        }
        let last = args.iter().rev().find(|l| {
            !matches!(
                walker.project.resolve(built.m, built.scope, l),
                Some(Object::LibraryInstance(
                    _,
                    "Dropout"
                        | "Identity"
                        | "Flatten"
                        | "ReLU"
                        | "Softmax"
                        | "LogSoftmax"
                        | "Sigmoid"
                        | "Tanh"
                        | "GELU",
                    _
                ))
            )
        })?;
        return layer_head(walker, built.m, built.scope, last, depth + 1);
    }
    None
}

/// The object a parameter holds (`model(x)` in a helper given the model), when every call
/// of its function in the project passes the same one, through callers that pass a
/// parameter of their own.
fn passed_object<'a>(
    walker: &Walker<'_, 'a>,
    m: &'a Module<'a>,
    scope: ScopeId,
    name: &'a ast::ExprName,
    depth: u32,
) -> Option<Object<'a>> {
    if depth > 4 {
        return None;
    }
    let (_, binding) = m.sem.lookup(scope, name.id.as_str(), name.range.start())?;
    let Bound::Param { scope: function, index, name: param, .. } = binding.value else { return None };
    let method = m.sem.class_of(function).is_some();
    let position = super::calls::param_position(index, method);
    let mut found: Option<Object<'a>> = None;
    for (cm, cscope, call) in walker.callers(m, function) {
        let arg = argument(call, param, position)?;
        let object = match (walker.project.resolve(cm, cscope, arg), arg) {
            (Some(o), _) => o,
            (None, Expr::Name(passed)) => passed_object(walker, cm, cscope, passed, depth + 1)?,
            _ => return None,
        };
        match (&found, &object) {
            (None, _) => found = Some(object),
            (Some(Object::Instance(fm, fc, fb)), Object::Instance(om, oc, ob))
                if std::ptr::eq(*fm, *om)
                    && fc == oc
                    && fb.map(|b| b.call as *const _) == ob.map(|b| b.call as *const _) => {}
            (Some(Object::LibraryInstance(_, _, fb)), Object::LibraryInstance(_, _, ob))
                if std::ptr::eq(fb.call, ob.call) => {}
            _ => return None,
        }
    }
    found
}
