//! AS104: a classification head whose size disagrees with the number of classes.

use super::shared::module_int_constants;
use crate::callsites;
use crate::checker::Checker;
use crate::fix::{Applicability, Edit, Fix};
use crate::rule_doc::{Autofix, RuleDoc, Severity};
use assertscope_flow::flow::Instance;
use assertscope_flow::semantic::{argument, int_literal, start, Bound, ScopeId};
use assertscope_flow::{Evidence, Place};
use ruff_python_ast::Expr;
use ruff_text_size::{Ranged, TextSize};
use std::collections::HashSet;

pub const DOC: RuleDoc = RuleDoc {
    code: "AS104",
    name: "head-size-mismatch",
    summary: "classification head `nn.Linear(_, K)` whose K disagrees with the module's num_classes constant",
    what_it_does: "Finds a module-level constant named like the number of classes (`NUM_CLASSES`, \
`n_classes`, `num_labels`, …) that the module uses, and a classification head built with a literal \
size that differs from it. A head is a `nn.Linear` whose output a local model's `forward` returns, the \
last layer of a `nn.Sequential`, or a Linear assigned to `classifier`, `head`, `fc`, `out`, `logits`.",
    why_it_matters: "When the labels run up to NUM_CLASSES - 1 but the head has fewer outputs, the first \
label >= K trips `t >= 0 && t < n_classes` in the loss kernel: a device-side assert, often many \
batches in. Literals left over from an earlier data set (`nn.Linear(512, 10)` after moving to 100 \
classes) are the usual source.",
    example: "NUM_CLASSES = 100\n...\nself.fc = nn.Linear(512, 10)",
    fix: "Build the head from the constant: `nn.Linear(512, NUM_CLASSES)`.",
    cause: "target-out-of-range",
    severity: Severity::Error,
    autofix: Autofix::Always(
        Applicability::Unsafe,
        "writes the class-count constant in place of the head's literal size (a checkpoint saved with the old size no longer loads)",
    ),
};

fn is_class_count_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase().replace('_', "");
    ["numclasses", "nclasses", "numclass", "numlabels", "nlabels", "classcount"].iter().any(|n| lower == *n)
}

const HEAD_NAMES: &[&str] =
    &["fc", "head", "out", "output", "logits", "classifier", "cls", "final", "fc_out"];

pub fn check(checker: &Checker) {
    let sem = checker.sem;
    let constants = module_int_constants(checker, is_class_count_name);
    if constants.is_empty() {
        return;
    }
    let heads = head_starts(checker);
    for site in &sem.calls {
        if sem.api_in(&site.call.func, "torch") != Some("Linear") {
            continue;
        }
        let Some(out) = argument(site.call, "out_features", Some(1)) else { continue };
        let Some(size) = int_literal(out) else {
            if is_head(checker, site.call, &heads) {
                check_sized_by_callers(checker, out, site.scope, &constants);
            }
            continue;
        };
        let named_head = sem
            .assigned_to
            .get(&site.call.range().start())
            .is_some_and(|n| HEAD_NAMES.contains(&n.to_ascii_lowercase().as_str()) || n.contains("classif"));
        if !named_head && !heads.contains(&site.call.range().start()) {
            continue;
        }
        if constants.iter().any(|(_, v)| *v == size) {
            continue;
        }
        let (name, value) = constants[0];
        let message = if size < value {
            format!("classification head has {size} outputs, but labels run up to {name} - 1 = {}", value - 1)
        } else {
            format!("classification head has {size} outputs, but {name} = {value}")
        };
        let call_text = checker.text(site.call.range());
        let out_text = checker.text(out.range());
        let fixed = match call_text.rfind(out_text) {
            Some(at) => format!("{}{name}{}", &call_text[..at], &call_text[at + out_text.len()..]),
            None => format!("nn.Linear(..., {name})"),
        };
        let fix = Fix::new(
            Applicability::Unsafe,
            format!("size the head with `{name}`"),
            vec![Edit::of(out, name)],
        );
        checker.report_fixable(
            DOC.code,
            out.range(),
            message,
            format!("size the head from the constant: `{fixed}`"),
            Vec::new(),
            Some(fix),
        );
    }
}

/// Whether a Linear is a classification head: assigned to a head's name, or a model's last layer.
fn is_head(checker: &Checker, call: &ruff_python_ast::ExprCall, heads: &HashSet<TextSize>) -> bool {
    let named = checker
        .sem
        .assigned_to
        .get(&call.range().start())
        .is_some_and(|n| HEAD_NAMES.contains(&n.to_ascii_lowercase().as_str()) || n.contains("classif"));
    named || heads.contains(&call.range().start())
}

/// A head sized by a parameter (`nn.Linear(d, n_out)` in `__init__(self, d, n_out)`): each
/// call that makes the model with a size other than the class count is reported where the
/// size is chosen, the argument or, for the default, the call.
fn check_sized_by_callers<'a>(
    checker: &Checker<'a>,
    out: &'a Expr,
    scope: ScopeId,
    constants: &[(&str, i64)],
) {
    let Some(param) = callsites::parameter_of(&checker.flow, out, scope) else { return };
    let Bound::Param { name: param_name, default, .. } = param else { return };
    for at in callsites::parameter_values(&checker.flow, &param) {
        let Some(size) = checker.flow.int_value(at.value, at.scope) else { continue };
        if constants.iter().any(|(_, v)| *v == size) {
            continue;
        }
        let (name, value) = constants[0];
        let model = checker.text(at.call.func.range());
        let message = if at.defaulted {
            format!("`{model}` is made with its default {param_name}={size} outputs, but {name} = {value}")
        } else {
            format!("`{model}` is given {param_name}={size}, but {name} = {value}")
        };
        let mut evidence = vec![Evidence {
            place: Place::Here(out.range()),
            label: format!("the head's size is `{param_name}`"),
        }];
        if let (true, Some(default)) = (at.defaulted, default) {
            evidence.push(Evidence {
                place: Place::Here(default.range()),
                label: format!("`{param_name}` defaults to {size}"),
            });
        }
        let fix = (!at.defaulted).then(|| {
            Fix::new(
                Applicability::Unsafe,
                format!("size the head with `{name}`"),
                vec![Edit::of(at.value, name)],
            )
        });
        checker.report_fixable(
            DOC.code,
            at.at,
            message,
            format!("pass the number of classes: `{param_name}={name}`"),
            evidence,
            fix,
        );
    }
}

/// Start offsets of the Linear calls that are a model's last layer: what a local model's
/// `forward` returns, and the last layer of each `nn.Sequential`.
fn head_starts(checker: &Checker) -> HashSet<TextSize> {
    let sem = checker.sem;
    let mut heads = HashSet::new();
    for site in &sem.calls {
        if sem.api_in(&site.call.func, "torch") == Some("Sequential") {
            if let Some(last) = site.call.arguments.args.last() {
                heads.insert(start(last));
            }
        }
    }
    for class in &sem.classes {
        let Some(&forward) = class.methods.get("forward") else { continue };
        for ret in sem.returns.get(&forward).into_iter().flatten() {
            let (value, scope) = checker.flow.origin(ret, forward);
            let Expr::Call(call) = value else { continue };
            if let Some(Instance::Torch("Linear", ctor, _)) = checker.flow.instance(&call.func, scope) {
                heads.insert(ctor.range().start());
            }
        }
    }
    heads
}
