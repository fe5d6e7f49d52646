//! AS108: torch.multinomial on values that may not be a valid distribution.

use super::snippet;
use crate::lint::flow::Facts;
use crate::lint::semantic::{argument, is_zero_literal, Bound, ScopeId};
use crate::lint::{Checker, RuleDoc, Severity};
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Operator};
use ruff_text_size::Ranged;

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
};

pub fn check(checker: &Checker) {
    let sem = checker.sem;
    for site in &sem.calls {
        let call = site.call;
        let probs = match sem.api_in(&call.func, "torch") {
            Some("multinomial") => argument(call, "input", Some(0)),
            Some(_) => continue,
            None => match &*call.func {
                Expr::Attribute(a) if a.attr.as_str() == "multinomial" => Some(&*a.value),
                _ => continue,
            },
        };
        let Some(probs) = probs else { continue };
        let (origin, scope) = checker.flow.origin(probs, site.scope);
        if let Some(temperature) = zero_temperature(checker, origin, scope) {
            let t = checker.text(temperature.range());
            checker.report(
                DOC.code,
                probs.range(),
                format!(
                    "`{}` divides by `{t}`, which can be 0: multinomial gets inf/NaN probabilities",
                    snippet(checker, probs)
                ),
                format!(
                    "treat `{t} == 0` as greedy decoding (argmax) before dividing, or use `max({t}, 1e-5)`"
                ),
            );
            continue;
        }
        let facts = checker.flow.facts(probs, site.scope);
        if facts.has(Facts::LOGITS) && !checker.flow.facts_on_any_path(probs, site.scope).has(Facts::NONNEG) {
            checker.report(
                DOC.code,
                probs.range(),
                format!(
                    "multinomial is given `{}`, raw logits that can be negative",
                    snippet(checker, probs)
                ),
                "pass probabilities: `torch.softmax(logits, dim=-1)`".to_string(),
            );
        }
    }
}

/// For `softmax(x / t)`, the divisor `t` when it can be zero.
fn zero_temperature<'a>(checker: &Checker<'a>, expr: &'a Expr, scope: ScopeId) -> Option<&'a Expr> {
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
    can_be_zero(checker, right, scope).then_some(&**right)
}

fn can_be_zero(checker: &Checker, divisor: &Expr, scope: ScopeId) -> bool {
    if is_zero_literal(divisor) {
        return true;
    }
    let Expr::Name(name) = divisor else { return false };
    let sem = checker.sem;
    let Some((binding_scope, binding)) = sem.lookup(scope, name.id.as_str(), name.range.start()) else {
        return false;
    };
    if compared_in(checker, binding_scope, name.id.as_str()) {
        return false;
    }
    let bindings = &sem.scopes[binding_scope].bindings[name.id.as_str()];
    bindings.iter().any(|b| match &b.value {
        Bound::Value(v) => is_zero_literal(v),
        Bound::Param { scope: fn_scope, index, name: param, default } => {
            default.is_some_and(is_zero_literal)
                || checker
                    .flow
                    .arguments_for(*fn_scope, *index, param)
                    .iter()
                    .any(|(arg, _)| is_zero_literal(arg))
        }
        _ => false,
    }) && matches!(binding.value, Bound::Value(_) | Bound::Param { .. })
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
            let mentions = |e: &Expr| matches!(e, Expr::Name(n) if n.id.as_str() == self.name);
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
                if matches!(&*stmt_if.test, Expr::Name(n) if n.id.as_str() == self.name) {
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
