//! AS109: hard-coded CUDA in a module that chooses its device at run time.

use crate::checker::Checker;
use crate::fix::{Applicability, Edit, Fix};
use crate::rule_doc::{Autofix, RuleDoc, Severity};
use assertscope_flow::semantic::{Bound, ClassId, ScopeId, Semantic};
use assertscope_flow::{Evidence, Place};
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextRange};

pub const DOC: RuleDoc = RuleDoc {
    code: "AS109",
    name: "hardcoded-cuda",
    summary: "hard-coded `.cuda()` / `device=\"cuda\"` mixed with a `device` variable in the same module",
    what_it_does: "In a module that picks its device at run time (a variable set from \
`torch.cuda.is_available()`, or to a device that can be `\"cpu\"`), finds hard-coded CUDA placements: \
`.cuda()`, `.to(\"cuda\")`, `device=\"cuda\"` and `torch.device(\"cuda\")`, outside `if` blocks that test \
for CUDA. A device taken from a command-line option (`torch.device(args.device)`) is chosen at run time too.",
    why_it_matters: "Part of the work then follows `device` and part is pinned to the GPU. When `device` is \
the CPU (no GPU, `CUDA_VISIBLE_DEVICES=`, a CPU debug run — the first step when chasing a device-side \
assert) the script fails with \"Expected all tensors to be on the same device\", or crashes outright \
without a GPU.",
    example: "device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\nmodel = Net().to(device)\nlabels = labels.cuda()",
    fix: "Use the variable everywhere: `.to(device)` and `device=device`.",
    cause: "device-mismatch",
    severity: Severity::Error,
    autofix: Autofix::Sometimes(
        Applicability::Unsafe,
        "writes the device variable in place of the hard-coded CUDA device (`.cuda()` becomes `.to(device)`; unsafe: the code then runs where the variable says, which is the point)",
    ),
};

pub fn check(checker: &Checker) {
    let sem = checker.sem;
    let devices = device_variables(checker);
    if devices.is_empty() {
        return;
    }
    for site in &sem.calls {
        if site.cuda_guarded {
            continue;
        }
        // Only a choice this code can see: its own function's, an enclosing one's, the
        // module's, or its class's (`self.device`) — not another function's.
        let Some(choice) = devices.iter().find(|d| d.visible_from(sem, site.scope)) else { continue };
        if choice.definition.contains_range(site.call.range()) {
            continue;
        }
        let device = choice.name.as_str();
        let definition = choice.definition;
        let hits = cuda_hits(checker, site.call, device);
        for (range, what, edit) in hits {
            // Only after the variable is bound: a use above its definition would not run.
            let fix = edit
                .filter(|_| definition.end() <= range.start())
                .map(|edit| Fix::new(Applicability::Unsafe, format!("use `{device}`"), vec![edit]));
            checker.report_fixable(
                DOC.code,
                range,
                format!("hard-coded {what}, but this code chooses its device at run time in `{device}`"),
                format!("use `{device}` here too (`.to({device})`, `device={device}`)"),
                vec![Evidence {
                    place: Place::Here(definition),
                    label: format!("`{device}` is chosen here"),
                }],
                fix,
            );
        }
    }
}

/// What in one call names CUDA by hand (`.cuda()`, `.to("cuda")`, `torch.device("cuda")`,
/// `device="cuda"`), how it is shown, and the edit that puts the device variable there.
fn cuda_hits(
    checker: &Checker,
    call: &ast::ExprCall,
    device: &str,
) -> Vec<(TextRange, String, Option<Edit>)> {
    let sem = checker.sem;
    let mut hits: Vec<(TextRange, String, Option<Edit>)> = Vec::new();
    if let Expr::Attribute(attr) = &*call.func {
        let on_value = sem.api(&attr.value).is_none();
        match attr.attr.as_str() {
            "cuda" if on_value => {
                // `.cuda(0)` keeps its argument: nothing is rewritten that could lose meaning.
                let whole = TextRange::new(attr.attr.range.start(), call.range().end());
                let edit = call.arguments.is_empty().then(|| Edit::replace(whole, format!("to({device})")));
                hits.push((attr.attr.range, "`.cuda()`".to_string(), edit));
            }
            "to" if on_value => {
                if let Some(arg) = call.arguments.args.first().filter(|a| is_cuda_literal(a)) {
                    hits.push((
                        arg.range(),
                        format!("`.to({})`", checker.text(arg.range())),
                        Some(Edit::of(arg, device)),
                    ));
                }
            }
            _ => {}
        }
    }
    if sem.api_in(&call.func, "torch") == Some("device")
        && call.arguments.args.first().is_some_and(is_cuda_literal)
    {
        hits.push((call.range(), format!("`{}`", checker.text(call.range())), Some(Edit::of(call, device))));
    }
    for keyword in &call.arguments.keywords {
        if keyword.arg.as_ref().is_some_and(|a| a.as_str() == "device") && is_cuda_literal(&keyword.value) {
            hits.push((
                keyword.range,
                format!("`{}`", checker.text(keyword.range)),
                Some(Edit::of(&keyword.value, device)),
            ));
        }
    }
    hits
}

fn is_cuda_literal(expr: &Expr) -> bool {
    matches!(expr, Expr::StringLiteral(s) if s.value.to_str().starts_with("cuda"))
}

/// A variable (or `self` attribute) holding a device chosen at run time.
struct DeviceChoice {
    name: String,
    definition: TextRange,
    /// The scope that binds the variable, or for `self.device` the class.
    scope: ScopeId,
    class: Option<ClassId>,
}

impl DeviceChoice {
    fn visible_from(&self, sem: &Semantic, scope: ScopeId) -> bool {
        if let Some(class) = self.class {
            return sem.class_of(scope) == Some(class);
        }
        let mut current = Some(scope);
        while let Some(s) = current {
            if s == self.scope {
                return true;
            }
            current = sem.scopes[s].parent;
        }
        false
    }
}

/// Every device chosen at run time, in source order of the choice.
fn device_variables(checker: &Checker) -> Vec<DeviceChoice> {
    let sem = checker.sem;
    let mut found = Vec::new();
    for (scope_id, scope) in sem.scopes.iter().enumerate() {
        for (name, bindings) in &scope.bindings {
            if !sem.is_loaded(name) {
                continue;
            }
            for binding in bindings {
                let Bound::Value(value) = binding.value else { continue };
                if chooses_device(value) || from_command_line(sem, value) {
                    found.push(DeviceChoice {
                        name: name.to_string(),
                        definition: value.range(),
                        scope: scope_id,
                        class: None,
                    });
                }
            }
        }
    }
    for (class_id, class) in sem.classes.iter().enumerate() {
        for (attr, bindings) in &class.attrs {
            for (scope, binding) in bindings {
                let Bound::Value(value) = binding.value else { continue };
                if chooses_device(value) {
                    found.push(DeviceChoice {
                        name: format!("self.{attr}"),
                        definition: value.range(),
                        scope: *scope,
                        class: Some(class_id),
                    });
                }
            }
        }
    }
    found.sort_by_key(|d| d.definition.start());
    found
}

/// A device named on the command line: `args.device` or `torch.device(args.device)`, where
/// `args` holds an argparse option of that name. Whatever its default, the person running
/// the script chooses it.
fn from_command_line(sem: &Semantic, value: &Expr) -> bool {
    let option = match value {
        Expr::Call(call) if sem.api_in(&call.func, "torch") == Some("device") => call.arguments.args.first(),
        other => Some(other),
    };
    let Some(Expr::Attribute(attr)) = option else { return false };
    matches!(&*attr.value, Expr::Name(_)) && sem.cli_defaults.contains_key(attr.attr.as_str())
}

/// `"cuda" if torch.cuda.is_available() else "cpu"`, `torch.device("cpu")`, and the like.
fn chooses_device(value: &Expr) -> bool {
    struct Finder {
        is_available: bool,
        cpu: bool,
        depth: u32,
    }
    impl<'b> Visitor<'b> for Finder {
        fn visit_expr(&mut self, expr: &'b Expr) {
            if self.depth > 50 {
                return;
            }
            match expr {
                Expr::Attribute(a) if a.attr.as_str() == "is_available" => self.is_available = true,
                Expr::StringLiteral(s) if matches!(s.value.to_str(), "cpu" | "mps") => self.cpu = true,
                _ => {}
            }
            self.depth += 1;
            visitor::walk_expr(self, expr);
            self.depth -= 1;
        }
    }
    let is_device_expr = match value {
        Expr::If(_) => true,
        Expr::Call(ast::ExprCall { func, .. }) => {
            matches!(&**func, Expr::Attribute(a) if a.attr.as_str() == "device")
        }
        _ => false,
    };
    if !is_device_expr {
        return false;
    }
    let mut finder = Finder { is_available: false, cpu: false, depth: 0 };
    finder.visit_expr(value);
    finder.is_available && finder.cpu
}
