//! Shape and dtype trails: the fact the op refused (one-hot rows, a `[N, 1]` column, a
//! floating or int32 dtype), as lint's facts tell it, and the call where the value got it.

use super::follow::{Cursor, Outcome, Walker};
use super::made::{self, Values};
use super::start::Start;
use super::Chain;
use crate::facts::Facts;
use ruff_python_ast::Expr;
use ruff_text_size::Ranged;

/// The fact a shape or dtype trail looks for: what the operand has that the op refused.
pub fn wanted_fact(walker: &Walker<'_, '_>, starts: &[Start<'_>]) -> Facts {
    if walker.query.rows {
        return Facts::NONE;
    }
    let mask = match walker.chain {
        Chain::Shape => Facts::ONE_HOT | Facts::COLUMN,
        Chain::Dtype => Facts::FLOAT | Facts::INT32,
        _ => return Facts::NONE,
    };
    let Some(start) = starts.first() else { return Facts::NONE };
    let cur = start.cursor();
    let facts = cur.m.flow.facts(cur.expr, cur.scope);
    [Facts::ONE_HOT, Facts::COLUMN, Facts::FLOAT, Facts::INT32]
        .into_iter()
        .find(|f| mask.has(*f) && facts.has(*f))
        .unwrap_or(Facts::NONE)
}

/// Where a shape or dtype trail's fact was made: a call or subscript whose value has it
/// while its input has not.
pub fn fact_made<'a>(walker: &Walker<'_, 'a>, cur: &Cursor<'a>) -> Option<Outcome<'a>> {
    let want = walker.want;
    let m = cur.m;
    let input: &Expr = match cur.expr {
        Expr::Call(call) => match &*call.func {
            Expr::Attribute(attr) if m.sem.api(&call.func).is_none() => &attr.value,
            _ => call.arguments.args.first()?,
        },
        Expr::Subscript(sub) => &sub.value,
        _ => return None,
    };
    let has = |e: &'a Expr| m.flow.facts(e, cur.scope).has(want);
    let singleton_input = want == Facts::COLUMN && m.flow.facts(cur.expr, cur.scope).has(Facts::SINGLETON);
    if !(has(cur.expr) || singleton_input) || has(input) {
        return None;
    }
    let text = made::text_of(m.file.text(), cur.expr);
    let note = if want == Facts::ONE_HOT {
        format!("`{text}` makes one-hot rows [N, C] where class indices [N] are expected")
    } else if want == Facts::COLUMN && singleton_input {
        format!("`{text}` makes each sample a one-element tensor: batched, a column [N, 1]")
    } else if want == Facts::COLUMN {
        format!("`{text}` makes a column [N, 1] where [N] is expected")
    } else if want == Facts::FLOAT {
        format!("`{text}` makes it floating point where class indices (int64) are expected")
    } else {
        format!("`{text}` makes it int32 where int64 is expected")
    };
    Some(walker.made(cur, cur.expr.start(), note, Values::Unknown))
}
