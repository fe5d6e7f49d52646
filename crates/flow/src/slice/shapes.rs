//! Shape and dtype trails: the fact the op refused (one-hot rows, a `[N, 1]` column, a
//! floating or int32 dtype), as lint's facts tell it. The walker (`follow`) finds the call
//! where the value got it.

use super::follow::Walker;
use super::query::Chain;
use super::start::Start;
use crate::facts::Facts;

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
