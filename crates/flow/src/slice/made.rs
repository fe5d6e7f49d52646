//! The computing steps: expressions that make a value rather than carry one (arithmetic,
//! a constant, a lookup with a default, a parse of raw text, a size computed from data, a
//! counter, a random draw, a function that can give inf or NaN), each with the words that
//! say what it did, and what values it can give, so that a source that cannot give the bad
//! value is not followed.

use super::query::BadValues;
use crate::semantic::int_literal;
use ruff_python_ast::{self as ast, Expr, Number, Operator, UnaryOp};

/// The values an expression can give, as far as its text tells.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Values {
    Unknown,
    /// Integers or floats in `[lo, hi]` (either end open when `None`); finite.
    Range(Option<f64>, Option<f64>),
    /// Not a number at all (`None`, a string).
    NotNumber,
    /// Rows in `[0, 1]` that sum to 1 (a softmax: its row's largest input gives at least
    /// 1/n), or NaN where the input was; never a row of zeros.
    Normalised,
}

impl Values {
    pub fn exactly(v: f64) -> Values {
        Values::Range(Some(v), Some(v))
    }

    /// Whether these values may hold one of the bad ones.
    pub fn may_give(self, bad: &BadValues) -> bool {
        match self {
            Values::Unknown => true,
            Values::NotNumber => bad.values.is_empty() && !bad.non_finite,
            Values::Normalised => !bad.zero_rows,
            Values::Range(lo, hi) => {
                if bad.non_finite {
                    return false;
                }
                bad.values.is_empty()
                    || bad.values.iter().any(|v| lo.is_none_or(|lo| *v >= lo) && hi.is_none_or(|hi| *v <= hi))
            }
        }
    }
}

/// A number literal's value (also `-1`, `1e-3`, `True`).
pub fn number(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::NumberLiteral(n) => match &n.value {
            Number::Int(i) => i.as_i64().map(|v| v as f64),
            Number::Float(f) => Some(*f),
            Number::Complex { .. } => None,
        },
        Expr::BooleanLiteral(b) => Some(f64::from(u8::from(b.value))),
        Expr::UnaryOp(ast::ExprUnaryOp { op: UnaryOp::USub, operand, .. }) => number(operand).map(|v| -v),
        Expr::UnaryOp(ast::ExprUnaryOp { op: UnaryOp::UAdd, operand, .. }) => number(operand),
        _ => None,
    }
}

/// Whether an expression is a constant: a number, a string, `None`, or a container of them.
pub fn is_constant(expr: &Expr) -> bool {
    match expr {
        Expr::NumberLiteral(_)
        | Expr::StringLiteral(_)
        | Expr::BytesLiteral(_)
        | Expr::BooleanLiteral(_)
        | Expr::NoneLiteral(_)
        | Expr::EllipsisLiteral(_) => true,
        Expr::UnaryOp(u) => is_constant(&u.operand),
        Expr::Tuple(t) => t.elts.iter().all(is_constant),
        Expr::List(l) => l.elts.iter().all(is_constant),
        Expr::Set(s) => s.elts.iter().all(is_constant),
        Expr::Dict(d) => {
            d.items.iter().all(|i| i.key.as_ref().is_some_and(is_constant) && is_constant(&i.value))
        }
        // `[-1] * n`: a constant repeated.
        Expr::BinOp(b) if b.op == Operator::Mult => {
            (is_constant(&b.left) && !matches!(*b.left, Expr::NumberLiteral(_)))
                || is_constant(&b.right) && !matches!(*b.right, Expr::NumberLiteral(_))
        }
        _ => false,
    }
}

/// The numbers a constant holds: `[1, 2, 3]` gives 1 to 3.
pub fn constant_values(expr: &Expr) -> Values {
    let mut lo: Option<f64> = None;
    let mut hi: Option<f64> = None;
    let mut any = false;
    let mut numbers = |v: f64| {
        any = true;
        lo = Some(lo.map_or(v, |l| l.min(v)));
        hi = Some(hi.map_or(v, |h| h.max(v)));
    };
    collect(expr, &mut numbers);
    if any {
        Values::Range(lo, hi)
    } else {
        Values::NotNumber
    }
}

fn collect(expr: &Expr, found: &mut impl FnMut(f64)) {
    if let Some(v) = number(expr) {
        found(v);
        return;
    }
    match expr {
        Expr::Tuple(ast::ExprTuple { elts, .. })
        | Expr::List(ast::ExprList { elts, .. })
        | Expr::Set(ast::ExprSet { elts, .. }) => elts.iter().for_each(|e| collect(e, found)),
        Expr::Dict(d) => d.items.iter().for_each(|i| collect(&i.value, found)),
        Expr::BinOp(b) => {
            collect(&b.left, found);
            collect(&b.right, found);
        }
        _ => {}
    }
}

/// What arithmetic can give, when its operands are literals or ranges the text fixes.
pub fn arithmetic_values<'e>(
    binop: &'e ast::ExprBinOp,
    left: Values,
    constant: &dyn Fn(&'e Expr) -> Option<f64>,
) -> Values {
    let right = constant(&binop.right);
    match (binop.op, left, right) {
        // Python's and torch's `%` by a positive number gives [0, k).
        (Operator::Mod, _, Some(k)) if k > 0.0 => {
            Values::Range(Some(0.0), Some(k - 1.0).filter(|_| k.fract() == 0.0))
        }
        (Operator::Add, Values::Range(lo, hi), Some(k)) => {
            Values::Range(lo.map(|l| l + k), hi.map(|h| h + k))
        }
        (Operator::Sub, Values::Range(lo, hi), Some(k)) => {
            Values::Range(lo.map(|l| l - k), hi.map(|h| h - k))
        }
        (Operator::Div | Operator::Pow, _, _) => Values::Unknown,
        _ => Values::Unknown,
    }
}

/// The range `randint(lo, hi)`, `arange(lo, hi)`, `range(lo, hi)` give: `[lo, hi)`;
/// one bound means `[0, hi)`. `inclusive` for `random.randint`, which includes `hi`.
pub fn bounded<'e>(args: &'e [Expr], inclusive: bool, constant: &dyn Fn(&'e Expr) -> Option<f64>) -> Values {
    let ints: Vec<Option<i64>> = args
        .iter()
        .take(2)
        .map(|a| int_literal(a).or_else(|| constant(a).filter(|v| v.fract() == 0.0).map(|v| v as i64)))
        .collect();
    let (lo, hi) = match ints.as_slice() {
        [Some(hi)] => (0, *hi),
        [Some(lo), Some(hi)] => (*lo, *hi),
        [Some(lo), None] => return Values::Range(Some(*lo as f64), None),
        _ => return Values::Unknown,
    };
    let top = if inclusive { hi } else { hi - 1 };
    Values::Range(Some(lo as f64), Some(top as f64))
}

/// What a computing function's values are known to be.
pub fn values_of(name: &str) -> Values {
    match name {
        "softmax" => Values::Normalised,
        _ => Values::Unknown,
    }
}

/// Functions that can turn finite values into inf or NaN, with why.
pub fn non_finite(name: &str) -> Option<&'static str> {
    Some(match name {
        "log" | "log2" | "log10" => "is -inf where its input is 0 and NaN where it is negative",
        "log1p" => "is -inf where its input is -1",
        "sqrt" | "rsqrt" => "is NaN where its input is negative",
        "exp" | "expm1" | "pow" | "square" => "overflows to inf for large inputs",
        "reciprocal" | "div" | "true_divide" => "is inf or NaN where it divides by 0",
        "softmax" | "log_softmax" => "is NaN for a row of all -inf, and carries any inf or NaN of its input",
        "normalize" => "is NaN for an all-zero row",
        "acos" | "asin" => "is NaN outside [-1, 1]",
        _ => return None,
    })
}

/// Calls that read or parse data from outside the program's own values: the value is in
/// the text or file they read.
pub fn parser(root: &str, name: &str) -> Option<&'static str> {
    Some(match (root, name) {
        ("json", "loads" | "load") => "parses it from the raw JSON",
        ("yaml", "safe_load" | "load") => "parses it from the raw YAML",
        ("csv", "reader" | "DictReader") => "reads it from the raw CSV text",
        ("pandas", "read_csv" | "read_json" | "read_parquet" | "read_table" | "read_excel") => {
            "reads it from the data file"
        }
        ("numpy", "loadtxt" | "genfromtxt" | "fromfile" | "fromstring") => "reads it from the data file",
        ("ast", "literal_eval") => "parses it from the raw text",
        _ => return None,
    })
}

/// Library calls that compute indices from data: the value is what they chose.
pub fn index_maker(name: &str) -> bool {
    matches!(
        name,
        "argmax"
            | "argmin"
            | "argsort"
            | "topk"
            | "sort"
            | "nonzero"
            | "multinomial"
            | "searchsorted"
            | "bucketize"
            | "randperm"
            | "unique"
            | "kthvalue"
            | "mode"
            | "histc"
            | "digitize"
    )
}

/// Library calls that create a tensor from nothing but their arguments, with what it holds.
pub fn creator(name: &str) -> Option<&'static str> {
    Some(match name {
        "zeros" | "zeros_like" => "filled with 0",
        "ones" | "ones_like" => "filled with 1",
        "full" | "full_like" => "filled with a constant",
        "empty" | "empty_like" => "left uninitialised (any value)",
        "randint" | "randint_like" | "integers" => "drawn at random",
        "randn" | "randn_like" | "rand" | "rand_like" | "normal" | "uniform" | "random"
        | "standard_normal" => "drawn at random",
        "arange" | "linspace" | "logspace" => "counted",
        "eye" => "an identity matrix",
        "bernoulli" | "poisson" | "binomial" | "choice" => "drawn at random",
        _ => return None,
    })
}

/// Reductions that compute one number from data.
pub fn reduction(name: &str) -> bool {
    matches!(
        name,
        "max"
            | "min"
            | "sum"
            | "mean"
            | "prod"
            | "numel"
            | "count"
            | "nunique"
            | "amax"
            | "amin"
            | "std"
            | "var"
            | "median"
    )
}

/// `a` as text: the source of an expression, on one line, shortened.
pub fn text_of(source: &str, expr: &Expr) -> String {
    use ruff_text_size::Ranged;
    let text = &source[expr.range()];
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 60 {
        let cut: String = one_line.chars().take(57).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}

/// How a number is written in a note: `5`, `-1`, `0.8`.
pub fn show(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}
