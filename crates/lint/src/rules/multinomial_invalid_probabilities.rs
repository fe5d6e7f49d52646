//! AS108: torch.multinomial on values that may not be a valid distribution.

use super::shared::snippet;
use crate::checker::Checker;
use crate::rule_doc::{Autofix, RuleDoc, Severity};
use assertscope_flow::flow::Facts;
use assertscope_flow::semantic::{argument, is_zero_literal, Bound, ScopeId};
use assertscope_flow::{Evidence, Place};
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Operator};
use ruff_text_size::{Ranged, TextRange};

pub const DOC: RuleDoc = RuleDoc {
    code: "AS108",
    name: "multinomial-invalid-probabilities",
    summary: "`torch.multinomial` on `softmax(x / t)` where t can be 0, or on raw logits",
    what_it_does: "Finds `torch.multinomial(p, …)` / `p.multinomial(…)` where `p` is `softmax(logits / t)` \
and `t` can be zero (a literal 0, a constant or default of 0, or 0 passed at a call in the module, with \
no comparison of `t` in the function), or where `p` is raw output (a layer's or model's output, \
`.logits`, `randn`) that never went through softmax, sigmoid or `exp`.",
    why_it_matters: "Dividing by a temperature of 0 makes infinities and NaN, and logits can be negative; \
multinomial then trips `invalid multinomial distribution` in a device-side assert (on the CPU: \
\"probability tensor contains either `inf`, `nan` or element < 0\"). Greedy decoding written as \
temperature 0 is the classic trigger.",
    example: "def sample(logits, temperature=0.0):\n    probs = F.softmax(logits / temperature, dim=-1)\n    return torch.multinomial(probs, 1)",
    fix: "Handle temperature 0 as greedy decoding (`argmax`) before dividing, or clamp it \
(`max(temperature, 1e-5)`); pass probabilities (`softmax(logits)`) to multinomial, never logits.",
    cause: "invalid-probabilities",
    severity: Severity::Error,
    autofix: Autofix::None,
};

pub fn check(checker: &Checker) {
    let sem = checker.sem;
    let sites = sem.calls_of("multinomial").filter(|site| match sem.api_in(&site.call.func, "torch") {
        Some(name) => name == "multinomial",
        None => matches!(&*site.call.func, Expr::Attribute(_)),
    });
    for site in sites {
        let call = site.call;
        let probs = match &*call.func {
            Expr::Attribute(a) if sem.api(&call.func).is_none() => Some(&*a.value),
            _ => argument(call, "input", Some(0)),
        };
        let Some(probs) = probs else { continue };
        let (origin, scope) = checker.flow.origin(probs, site.scope);
        if let Some((temperature, evidence)) = zero_temperature(checker, origin, scope) {
            let t = checker.text(temperature.range());
            let mut chain = evidence;
            chain.push(Evidence {
                place: Place::Here(origin.range()),
                label: format!("divided by `{t}` here"),
            });
            checker.report_with(
                DOC.code,
                probs.range(),
                format!(
                    "`{}` divides by `{t}`, which can be 0: multinomial gets inf/NaN probabilities",
                    snippet(checker, probs)
                ),
                format!(
                    "treat `{t} == 0` as greedy decoding (argmax) before dividing, or use `max({t}, 1e-5)`"
                ),
                chain,
            );
            continue;
        }
        let facts = checker.flow.facts(probs, site.scope);
        if facts.has(Facts::LOGITS) && !checker.flow.facts_on_any_path(probs, site.scope).has(Facts::NONNEG) {
            checker.report_with(
                DOC.code,
                probs.range(),
                format!(
                    "multinomial is given `{}`, raw logits that can be negative",
                    snippet(checker, probs)
                ),
                "pass probabilities: `torch.softmax(logits, dim=-1)`".to_string(),
                checker.flow.trace(probs, site.scope, Facts::LOGITS),
            );
        }
    }
}

/// For `softmax(x / t)`, the divisor `t` when it can be zero, with where the zero comes from.
fn zero_temperature<'a>(
    checker: &Checker<'a>,
    expr: &'a Expr,
    scope: ScopeId,
) -> Option<(&'a Expr, Vec<Evidence>)> {
    let Expr::Call(call) = expr else { return None };
    let input = match checker.sem.api_in(&call.func, "torch") {
        Some("softmax") => argument(call, "input", Some(0))?,
        Some(_) => return None,
        None => match &*call.func {
            Expr::Attribute(a) if a.attr.as_str() == "softmax" => &*a.value,
            _ => return None,
        },
    };
    let (input, scope) = checker.flow.origin(input, scope);
    let Expr::BinOp(ast::ExprBinOp { op: Operator::Div, right, .. }) = input else { return None };
    let mut evidence = Vec::new();
    can_be_zero(checker, right, scope, 0, &mut evidence).then_some((&**right, evidence))
}

/// Whether `divisor` can be zero: a literal 0, or a name, parameter, attribute or
/// configuration value (argparse default, dataclass field) that can hold one, with no
/// comparison of it where it is used. `evidence` gets the way from the zero, origin first.
fn can_be_zero<'a>(
    checker: &Checker<'a>,
    divisor: &'a Expr,
    scope: ScopeId,
    depth: u32,
    evidence: &mut Vec<Evidence>,
) -> bool {
    if depth > 8 {
        return false;
    }
    if is_zero_literal(divisor) {
        return true;
    }
    let sem = checker.sem;
    let step = |place: TextRange, label: String, evidence: &mut Vec<Evidence>| {
        evidence.insert(0, Evidence { place: Place::Here(place), label });
    };
    match divisor {
        Expr::Name(name) => {
            let Some((binding_scope, binding)) = sem.lookup(scope, name.id.as_str(), name.range.start())
            else {
                return false;
            };
            if compared_in(checker, binding_scope, name.id.as_str()) {
                return false;
            }
            match &binding.value {
                Bound::Value(v) => {
                    let zero = can_be_zero(checker, v, binding_scope, depth + 1, evidence);
                    if zero {
                        step(v.range(), format!("`{}` is assigned here", name.id), evidence);
                    }
                    zero
                }
                Bound::Param { scope: fn_scope, index, name: param, default } => {
                    if let Some(default) = default.filter(|d| is_zero_literal(d)) {
                        step(default.range(), format!("`{param}` defaults to 0"), evidence);
                        return true;
                    }
                    for (arg, arg_scope) in checker.flow.arguments_for(*fn_scope, *index, param) {
                        if can_be_zero(checker, arg, arg_scope, depth + 1, evidence) {
                            step(arg.range(), format!("passed as `{param}` here"), evidence);
                            return true;
                        }
                    }
                    false
                }
                _ => false,
            }
        }
        Expr::Attribute(attr) => {
            let function = function_scope(checker, scope);
            if function.is_some_and(|f| compared_in(checker, f, attr.attr.as_str())) {
                return false;
            }
            let value = match checker.flow.origin(divisor, scope) {
                (v, s) if !std::ptr::eq(v, divisor) => Some((v, s)),
                _ => None,
            };
            let Some((value, value_scope)) = value else { return false };
            if value_scope != scope && compared_in(checker, value_scope, attr.attr.as_str()) {
                return false;
            }
            let zero = can_be_zero(checker, value, value_scope, depth + 1, evidence);
            if zero {
                let what = checker.text(attr.range());
                step(value.range(), format!("`{what}` can be 0: it comes from here"), evidence);
            }
            zero
        }
        _ => false,
    }
}

/// The innermost function scope around `scope`.
fn function_scope(checker: &Checker, scope: ScopeId) -> Option<ScopeId> {
    let mut current = Some(scope);
    while let Some(s) = current {
        if checker.sem.function(s).is_some() {
            return Some(s);
        }
        current = checker.sem.scopes[s].parent;
    }
    None
}

/// Whether the function of `scope` compares `name` (`if t == 0`, `t > 0`, `max(t, eps)`): then
/// the zero case is handled.
fn compared_in(checker: &Checker, scope: ScopeId, name: &str) -> bool {
    struct Finder<'n> {
        name: &'n str,
        found: bool,
        depth: u32,
    }
    impl<'b> Visitor<'b> for Finder<'_> {
        fn visit_expr(&mut self, expr: &'b Expr) {
            if self.found || self.depth > 200 {
                return;
            }
            // `t`, or the field of a configuration (`args.temperature`, `self.temperature`).
            let mentions = |e: &Expr| match e {
                Expr::Name(n) => n.id.as_str() == self.name,
                Expr::Attribute(a) => a.attr.as_str() == self.name,
                _ => false,
            };
            match expr {
                Expr::Compare(cmp) if mentions(&cmp.left) || cmp.comparators.iter().any(mentions) => {
                    self.found = true
                }
                Expr::UnaryOp(u) if u.op == ast::UnaryOp::Not && mentions(&u.operand) => self.found = true,
                Expr::Call(call)
                    if matches!(&*call.func, Expr::Name(f) if matches!(f.id.as_str(), "max" | "clamp"))
                        && call.arguments.args.iter().any(mentions) =>
                {
                    self.found = true
                }
                _ => {
                    self.depth += 1;
                    visitor::walk_expr(self, expr);
                    self.depth -= 1;
                }
            }
        }
        fn visit_stmt(&mut self, stmt: &'b ast::Stmt) {
            if let ast::Stmt::If(stmt_if) = stmt {
                let named = match &*stmt_if.test {
                    Expr::Name(n) => n.id.as_str() == self.name,
                    Expr::Attribute(a) => a.attr.as_str() == self.name,
                    _ => false,
                };
                if named {
                    self.found = true;
                }
            }
            if !self.found && self.depth <= 200 {
                self.depth += 1;
                visitor::walk_stmt(self, stmt);
                self.depth -= 1;
            }
        }
    }
    let Some(def) = checker.sem.function(scope) else { return false };
    let mut finder = Finder { name, found: false, depth: 0 };
    finder.visit_body(&def.body);
    finder.found
}
