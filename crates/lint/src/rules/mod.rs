//! The lint rules, one per file. Codes are stable: a rule may be removed, never renumbered.

use super::fix::Edit;
use super::flow::Facts;
use super::losses::{LossCall, LossKind};
use super::semantic::{Bound, MODULE};
use super::{Checker, RuleDoc};
use ruff_python_ast::Expr;
use ruff_text_size::Ranged;

mod batchnorm_last_batch;
mod bce_without_sigmoid;
mod embedding_too_small;
mod hardcoded_cuda;
mod head_size_mismatch;
mod int32_class_target;
mod multinomial_invalid_probabilities;
mod one_hot_target;
mod softmax_into_cross_entropy;
mod target_column_shape;
mod target_out_of_range;
mod tokens_added_without_resize;

pub struct Rule {
    pub doc: RuleDoc,
    pub check: fn(&Checker),
}

/// A rule per module, each exporting its `DOC` and its `check`.
macro_rules! rules {
    ($($module:ident),* $(,)?) => {
        &[$(Rule { doc: $module::DOC, check: $module::check }),*]
    };
}

/// Every rule, ordered by code.
pub static ALL: &[Rule] = rules![
    one_hot_target,
    target_column_shape,
    bce_without_sigmoid,
    head_size_mismatch,
    tokens_added_without_resize,
    embedding_too_small,
    batchnorm_last_batch,
    multinomial_invalid_probabilities,
    hardcoded_cuda,
    int32_class_target,
    softmax_into_cross_entropy,
    target_out_of_range,
];

/// `expr.method()` as an edit of `expr`: the call appended, with parentheses around an
/// expression that binds more loosely than a call (`a + b` becomes `(a + b).long()`).
fn append_call(checker: &Checker, expr: &Expr, call: &str) -> Edit {
    let atom = matches!(
        expr,
        Expr::Name(_)
            | Expr::Attribute(_)
            | Expr::Call(_)
            | Expr::Subscript(_)
            | Expr::List(_)
            | Expr::Tuple(_)
    );
    let text = &checker.source[expr.range()];
    if atom {
        Edit::insert_at(expr.range().end(), format!(".{call}"))
    } else {
        Edit::of(expr, format!("({text}).{call}"))
    }
}

/// Source text of an expression for a message: its first line, shortened.
fn snippet(checker: &Checker, expr: &Expr) -> String {
    let text = checker.text(expr.range());
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text.to_string()
    }
}

/// The class-index loss calls (cross_entropy, nll_loss) with the facts of their target.
fn class_targets<'c, 'a>(
    checker: &'c Checker<'a>,
) -> impl Iterator<Item = (&'c LossCall<'a>, &'a Expr, Facts)> + 'c {
    checker.losses.iter().filter(|l| l.kind.takes_class_indices()).filter_map(move |loss| {
        let target = loss.target?;
        Some((loss, target, checker.flow.facts(target, loss.scope)))
    })
}

/// The loss calls of `kind` with the facts of their input.
fn loss_inputs<'c, 'a>(
    checker: &'c Checker<'a>,
    kinds: &'c [LossKind],
) -> impl Iterator<Item = (&'c LossCall<'a>, &'a Expr, Facts)> + 'c {
    checker.losses.iter().filter(|l| kinds.contains(&l.kind)).filter_map(move |loss| {
        let input = loss.input?;
        Some((loss, input, checker.flow.facts(input, loss.scope)))
    })
}

/// Whether a receiver's name says it is a tokenizer (`tokenizer`, `tok`, `self.tokenizer`).
fn is_tokenizer(expr: &Expr) -> bool {
    let name = match expr {
        Expr::Name(n) => n.id.as_str(),
        Expr::Attribute(a) => a.attr.as_str(),
        _ => return false,
    };
    let lower = name.to_ascii_lowercase();
    lower.contains("tokenizer") || lower == "tok" || lower.ends_with("_tok") || lower.contains("processor")
}

/// Module-level integer constants whose name `matches`, that the module reads and that hold
/// one value, sorted by name.
fn module_int_constants<'a>(checker: &Checker<'a>, matches: fn(&str) -> bool) -> Vec<(&'a str, i64)> {
    let sem = checker.sem;
    let mut out = Vec::new();
    for (name, bindings) in &sem.scopes[MODULE].bindings {
        if !matches(name) || !sem.is_loaded(name) {
            continue;
        }
        let mut value = None;
        for binding in bindings {
            let v = match binding.value {
                Bound::Value(v) => checker.flow.int_value(v, MODULE),
                _ => None,
            };
            match (v, value) {
                (Some(v), None) => value = Some(v),
                (Some(v), Some(seen)) if v == seen => {}
                _ => {
                    value = None;
                    break;
                }
            }
        }
        if let Some(v) = value {
            out.push((*name, v));
        }
    }
    // Constants imported from a local module (`from config import NUM_CLASSES`).
    for (local, import) in &sem.imports {
        if import.from.is_none() || !matches(local) || !sem.is_loaded(local) {
            continue;
        }
        if let Some((module, name)) = checker.flow.imported(local) {
            if let Some(&value) = module.int_constants.get(name) {
                out.push((*local, value));
            }
        }
    }
    out.sort();
    out
}
