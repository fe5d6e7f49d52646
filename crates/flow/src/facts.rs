//! What an expression is known to hold, as a set of bits: one-hot, a column `[N, 1]`, int32,
//! probabilities, raw logits… Lint's rules ask for them; the flow computes them.

/// A set of facts about a value, as bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Facts(pub(crate) u16);

impl Facts {
    pub const NONE: Facts = Facts(0);
    /// Made by `one_hot` (or `eye(C)[y]`): shape `[N, C]`.
    pub const ONE_HOT: Facts = Facts(1);
    /// Converted to a floating dtype.
    pub const FLOAT: Facts = Facts(1 << 1);
    /// Reshaped to a column, `[N, 1]`.
    pub const COLUMN: Facts = Facts(1 << 2);
    /// dtype int32.
    pub const INT32: Facts = Facts(1 << 3);
    /// In `[0, 1]` (sigmoid, softmax, rand, clamp(0, 1)).
    pub const PROB: Facts = Facts(1 << 4);
    /// Never negative.
    pub const NONNEG: Facts = Facts(1 << 5);
    /// The output of softmax (normalised probabilities).
    pub const SOFTMAX: Facts = Facts(1 << 6);
    /// The output of log_softmax.
    pub const LOG_PROB: Facts = Facts(1 << 7);
    /// Unbounded real values: a layer's or model's raw output, `randn`.
    pub const LOGITS: Facts = Facts(1 << 8);
    /// dtype int64.
    pub const INT64: Facts = Facts(1 << 9);
    /// One sample's tensor of shape `[1]`; batched by a DataLoader it becomes `[N, 1]`.
    pub const SINGLETON: Facts = Facts(1 << 10);

    /// What survives reshaping, moving and indexing of a tensor.
    pub(crate) const CARRIED: Facts = Facts(
        Self::ONE_HOT.0
            | Self::FLOAT.0
            | Self::COLUMN.0
            | Self::INT32.0
            | Self::PROB.0
            | Self::NONNEG.0
            | Self::SOFTMAX.0
            | Self::LOG_PROB.0
            | Self::LOGITS.0
            | Self::INT64.0,
    );
    pub(crate) const DTYPES: Facts = Facts(Self::FLOAT.0 | Self::INT32.0 | Self::INT64.0);
    pub(crate) const RANGES: Facts =
        Facts(Self::PROB.0 | Self::NONNEG.0 | Self::SOFTMAX.0 | Self::LOG_PROB.0 | Self::LOGITS.0);

    pub fn has(self, other: Facts) -> bool {
        self.0 & other.0 == other.0 && other.0 != 0
    }
    pub(crate) fn with(self, other: Facts) -> Facts {
        Facts(self.0 | other.0)
    }
    pub(crate) fn without(self, other: Facts) -> Facts {
        Facts(self.0 & !other.0)
    }
    pub(crate) fn only(self, other: Facts) -> Facts {
        Facts(self.0 & other.0)
    }
    pub(crate) fn with_dtype(self, dtype: Facts) -> Facts {
        self.without(Self::DTYPES).with(dtype)
    }
    pub(crate) fn with_range(self, range: Facts) -> Facts {
        self.without(Self::RANGES).with(range)
    }
}

impl std::ops::BitOr for Facts {
    type Output = Facts;
    fn bitor(self, rhs: Facts) -> Facts {
        self.with(rhs)
    }
}
