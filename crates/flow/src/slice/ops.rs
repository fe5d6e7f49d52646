//! Where an op's operand sits in a call: the op's functional signature, the torch modules
//! that run it (and their `forward`'s parameters), and its tensor-method form, whose
//! receiver is the functional form's first argument.

pub struct Op {
    /// Functional and method names (`cross_entropy`, `gather`).
    pub functions: &'static [&'static str],
    /// `torch.nn` classes whose call runs it.
    pub modules: &'static [&'static str],
    /// The functional signature's parameters, in order.
    pub params: &'static [&'static str],
    /// The modules' `forward` parameters, in order.
    pub forward: &'static [&'static str],
}

pub static OPS: &[Op] = &[
    Op {
        functions: &["cross_entropy"],
        modules: &["CrossEntropyLoss"],
        params: &["input", "target"],
        forward: &["input", "target"],
    },
    Op {
        functions: &["nll_loss", "nll_loss2d", "nll_loss_nd"],
        modules: &["NLLLoss", "NLLLoss2d"],
        params: &["input", "target"],
        forward: &["input", "target"],
    },
    Op {
        functions: &["multi_margin_loss"],
        modules: &["MultiMarginLoss"],
        params: &["input", "target"],
        forward: &["input", "target"],
    },
    Op {
        functions: &["multilabel_margin_loss"],
        modules: &["MultiLabelMarginLoss"],
        params: &["input", "target"],
        forward: &["input", "target"],
    },
    Op {
        functions: &["binary_cross_entropy"],
        modules: &["BCELoss"],
        params: &["input", "target"],
        forward: &["input", "target"],
    },
    Op {
        functions: &["binary_cross_entropy_with_logits"],
        modules: &["BCEWithLogitsLoss"],
        params: &["input", "target"],
        forward: &["input", "target"],
    },
    Op {
        functions: &["ctc_loss"],
        modules: &["CTCLoss"],
        params: &["log_probs", "targets", "input_lengths", "target_lengths", "blank"],
        forward: &["log_probs", "targets", "input_lengths", "target_lengths"],
    },
    Op { functions: &["one_hot"], modules: &[], params: &["tensor", "num_classes"], forward: &[] },
    Op {
        functions: &["embedding"],
        modules: &["Embedding"],
        params: &["input", "weight"],
        forward: &["input"],
    },
    Op {
        functions: &["embedding_bag"],
        modules: &["EmbeddingBag"],
        params: &["input", "weight", "offsets"],
        forward: &["input", "offsets"],
    },
    Op { functions: &["index_select"], modules: &[], params: &["input", "dim", "index"], forward: &[] },
    Op { functions: &["gather"], modules: &[], params: &["input", "dim", "index"], forward: &[] },
    Op { functions: &["take_along_dim"], modules: &[], params: &["input", "indices", "dim"], forward: &[] },
    Op { functions: &["take"], modules: &[], params: &["input", "index"], forward: &[] },
    Op {
        functions: &[
            "scatter",
            "scatter_",
            "scatter_add",
            "scatter_add_",
            "scatter_reduce",
            "scatter_reduce_",
        ],
        modules: &[],
        params: &["input", "dim", "index", "src"],
        forward: &[],
    },
    Op {
        functions: &[
            "index_add",
            "index_add_",
            "index_copy",
            "index_copy_",
            "index_fill",
            "index_fill_",
            "index_reduce",
            "index_reduce_",
        ],
        modules: &[],
        params: &["input", "dim", "index", "source"],
        forward: &[],
    },
    Op {
        functions: &["index_put", "index_put_"],
        modules: &[],
        params: &["input", "indices", "values"],
        forward: &[],
    },
    Op { functions: &["multinomial"], modules: &[], params: &["input", "num_samples"], forward: &[] },
    Op { functions: &["bincount"], modules: &[], params: &["input", "weights", "minlength"], forward: &[] },
    Op {
        functions: &["batch_norm"],
        modules: &["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"],
        params: &["input"],
        forward: &["input"],
    },
    Op {
        functions: &["lstm", "gru", "rnn_tanh", "rnn_relu"],
        modules: &["LSTM", "GRU", "RNN"],
        params: &["input", "hx"],
        forward: &["input", "hx"],
    },
    Op {
        functions: &["linear"],
        modules: &["Linear", "LazyLinear"],
        params: &["input", "weight", "bias"],
        forward: &["input"],
    },
    Op {
        functions: &["kl_div"],
        modules: &["KLDivLoss"],
        params: &["input", "target"],
        forward: &["input", "target"],
    },
];

/// The op of that name (a functional or method name, or an op family's first name).
pub fn op(name: &str) -> Option<&'static Op> {
    let name = name.trim_start_matches("aten::").trim_end_matches(".default");
    OPS.iter().find(|o| o.functions.contains(&name))
}

/// Parameter names that mean the same operand in different signatures.
pub fn same_parameter(a: &str, b: &str) -> bool {
    fn group(p: &str) -> &str {
        match p {
            "target" | "targets" | "labels" | "y" => "target",
            "index" | "indices" | "idx" => "index",
            "input" | "tensor" | "self" | "x" => "input",
            other => other,
        }
    }
    group(a) == group(b)
}

impl Op {
    /// The position of `parameter` in the functional signature.
    pub fn position(&self, parameter: &str) -> Option<usize> {
        self.params.iter().position(|p| same_parameter(p, parameter))
    }

    /// The position of `parameter` in the modules' `forward`.
    pub fn forward_position(&self, parameter: &str) -> Option<usize> {
        self.forward.iter().position(|p| same_parameter(p, parameter))
    }
}

/// The argument that sets a torch class's size, by name and position.
pub fn size_argument(class: &str) -> Option<(&'static str, usize)> {
    Some(match class {
        "Linear" | "LazyLinear" | "Bilinear" => ("out_features", 1),
        "Embedding" | "EmbeddingBag" => ("num_embeddings", 0),
        "Conv1d" | "Conv2d" | "Conv3d" | "ConvTranspose1d" | "ConvTranspose2d" | "ConvTranspose3d" => {
            ("out_channels", 1)
        }
        "LSTM" | "GRU" | "RNN" => ("hidden_size", 1),
        "CTCLoss" => ("blank", 0),
        "CrossEntropyLoss" | "NLLLoss" => ("ignore_index", 2),
        _ => return None,
    })
}
