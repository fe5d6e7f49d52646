//! AS107: a training DataLoader that can end in a one-sample batch, feeding BatchNorm.

use crate::checker::Checker;
use crate::fix::{Applicability, Edit, Fix};
use crate::rule_doc::{Autofix, RuleDoc, Severity};
use assertscope_flow::semantic::{argument, ClassId};
use ruff_python_ast::Expr;
use ruff_text_size::Ranged;

pub const DOC: RuleDoc = RuleDoc {
    code: "AS107",
    name: "batchnorm-last-batch",
    summary: "DataLoader without `drop_last=True` feeding a model with BatchNorm1d in training",
    what_it_does: "Finds a training DataLoader (assigned to a name with `train`, or with `shuffle=True`) \
built without `drop_last=True`, in a module that defines a model with `nn.BatchNorm1d`, creates it, \
and trains it (`backward()`, `optimizer.step()` or `.train()`).",
    why_it_matters: "When the data set size leaves a remainder of one, the last batch has a single \
sample. BatchNorm1d in training mode cannot compute a variance from one value per channel and fails \
with \"Expected more than 1 value per channel when training\", at the end of an epoch, after all the \
work of that epoch.",
    example:
        "train_loader = DataLoader(train_set, batch_size=64, shuffle=True)\nself.bn = nn.BatchNorm1d(256)",
    fix: "Pass `drop_last=True` to the training DataLoader (evaluation loaders run the model in eval mode \
and need no change).",
    cause: "batchnorm-single-sample",
    severity: Severity::Error,
    autofix: Autofix::Always(
        Applicability::Unsafe,
        "adds `drop_last=True` to the DataLoader (the last partial batch of each epoch is no longer trained on)",
    ),
};

pub fn check(checker: &Checker) {
    let sem = checker.sem;
    let Some(model) = batchnorm_model(checker) else { return };
    let trains = sem.calls.iter().any(|site| {
        matches!(&*site.call.func, Expr::Attribute(a) if matches!(a.attr.as_str(), "backward" | "step" | "train"))
    });
    if !trains {
        return;
    }
    let model_name = sem.classes[model].def.name.as_str();
    for site in &sem.calls {
        if sem.api_in(&site.call.func, "torch") != Some("DataLoader") {
            continue;
        }
        let call = site.call;
        if call.arguments.find_keyword("drop_last").is_some()
            || call.arguments.find_keyword("batch_sampler").is_some()
            || call.arguments.keywords.iter().any(|k| k.arg.is_none())
        {
            continue;
        }
        let batch_size =
            argument(call, "batch_size", Some(1)).and_then(|b| checker.flow.int_value(b, site.scope));
        if batch_size == Some(1) {
            continue;
        }
        // A data set of known size whose batches never leave a remainder of one.
        let samples =
            argument(call, "dataset", Some(0)).and_then(|d| checker.flow.sample_count(d, site.scope));
        if let (Some(samples), Some(batch)) = (samples, batch_size) {
            if batch > 1 && samples % batch != 1 {
                continue;
            }
        }
        let name = sem.assigned_to.get(&call.range().start()).map(|n| n.to_ascii_lowercase());
        let named_train = name.as_deref().is_some_and(|n| n.contains("train"));
        let named_eval =
            name.as_deref().is_some_and(|n| ["val", "test", "eval"].iter().any(|w| n.contains(w)));
        let shuffled = matches!(
            argument(call, "shuffle", Some(2)),
            Some(Expr::BooleanLiteral(b)) if b.value
        );
        if named_eval || !(named_train || shuffled) {
            continue;
        }
        let last = call
            .arguments
            .args
            .iter()
            .map(|a| a.range().end())
            .chain(call.arguments.keywords.iter().map(|k| k.range.end()))
            .max();
        let fix = last.map(|end| {
            Fix::new(
                Applicability::Unsafe,
                "drop the last partial batch",
                vec![Edit::insert_at(end, ", drop_last=True")],
            )
        });
        checker.report_fixable(
            DOC.code,
            call.func.range(),
            format!(
                "training DataLoader may end in a one-sample batch, and `{model_name}` has BatchNorm1d, which fails on it"
            ),
            "pass `drop_last=True` to this DataLoader".to_string(),
            Vec::new(),
            fix,
        );
    }
}

/// A model class of this module with `nn.BatchNorm1d` that the module also creates.
fn batchnorm_model(checker: &Checker) -> Option<ClassId> {
    let sem = checker.sem;
    let with_bn = sem.calls.iter().filter_map(|site| {
        (sem.api_in(&site.call.func, "torch") == Some("BatchNorm1d"))
            .then(|| sem.class_of(site.scope))
            .flatten()
    });
    let mut found = None;
    for class in with_bn {
        let name = sem.classes[class].def.name.as_str();
        let created =
            sem.calls.iter().any(|s| matches!(&*s.call.func, Expr::Name(n) if n.id.as_str() == name));
        if created {
            found = Some(class);
            break;
        }
    }
    found
}
