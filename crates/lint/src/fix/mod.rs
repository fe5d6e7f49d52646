//! Fixes, as ruff has them: a finding may carry a [`Fix`], edits on byte ranges of the
//! source that replace only what must change, so comments and formatting around them stay.
//! Each fix says how far it can be trusted ([`Applicability`]): `--fix` applies the safe
//! ones, `--unsafe-fixes` the unsafe ones too, and display-only fixes are never applied.
//! Fixes are applied, the file linted again and the new fixes applied, until nothing
//! changes ([`fix_until_stable`]), at most [`MAX_ITERATIONS`] times.

mod edits;
mod until_stable;

pub use edits::{apply, Applicability, Edit, Fix};
pub use until_stable::{fix_until_stable, Fixed, MAX_ITERATIONS};
