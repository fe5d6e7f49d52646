//! The lint rules, one per file. Codes are stable: a rule may be removed, never renumbered.

use crate::checker::Checker;
use crate::rule_doc::RuleDoc;

mod batchnorm_last_batch;
mod bce_without_sigmoid;
mod embedding_too_small;
mod hardcoded_cuda;
mod head_size_mismatch;
mod int32_class_target;
mod multinomial_invalid_probabilities;
mod one_hot_target;
mod shared;
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
