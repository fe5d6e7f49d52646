//! What several rules look for or write: the class-index targets and the inputs of loss
//! calls, tokenizers, a module's integer constants, an expression's text for a message,
//! and a method call appended as an edit.

use crate::checker::Checker;
use crate::fix::Edit;
use crate::losses::{LossCall, LossKind};
use assertscope_flow::flow::Facts;
use assertscope_flow::semantic::{Bound, MODULE};
use ruff_python_ast::Expr;
use ruff_text_size::Ranged;

/// `expr.method()` as an edit of `expr`: the call appended, with parentheses around an
/// expression that binds more loosely than a call (`a + b` becomes `(a + b).long()`).
pub(super) fn append_call(checker: &Checker, expr: &Expr, call: &str) -> Edit {
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
pub(super) fn snippet(checker: &Checker, expr: &Expr) -> String {
    let text = checker.text(expr.range());
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text.to_string()
    }
}

/// The class-index loss calls (cross_entropy, nll_loss) with the facts of their target.
pub(super) fn class_targets<'c, 'a>(
    checker: &'c Checker<'a>,
) -> impl Iterator<Item = (&'c LossCall<'a>, &'a Expr, Facts)> + 'c {
    checker.losses.iter().filter(|l| l.kind.takes_class_indices()).filter_map(move |loss| {
        let target = loss.target?;
        Some((loss, target, checker.flow.facts(target, loss.scope)))
    })
}

/// The loss calls of `kind` with the facts of their input.
pub(super) fn loss_inputs<'c, 'a>(
    checker: &'c Checker<'a>,
    kinds: &'c [LossKind],
) -> impl Iterator<Item = (&'c LossCall<'a>, &'a Expr, Facts)> + 'c {
    checker.losses.iter().filter(|l| kinds.contains(&l.kind)).filter_map(move |loss| {
        let input = loss.input?;
        Some((loss, input, checker.flow.facts(input, loss.scope)))
    })
}

/// Whether a receiver's name says it is a tokenizer (`tokenizer`, `tok`, `self.tokenizer`).
pub(super) fn is_tokenizer(expr: &Expr) -> bool {
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
pub(super) fn module_int_constants<'a>(
    checker: &Checker<'a>,
    matches: fn(&str) -> bool,
) -> Vec<(&'a str, i64)> {
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
