//! The slice on the project's labelled buggy scripts (tests/fixtures/origin), given what the
//! guard knows at the failure: the call stack's user lines, the op and its refused
//! parameter, and the bad values. The labelled origin line must be a step of the trail
//! (of the value, or of the size it broke).

mod support;

#[path = "../../../tests/origin_support/only_moves.rs"]
mod only_moves;

use assertscope_flow::slice::{self, Chain, Frame, Role, SizeQuery};
use support::{show, Project};

fn fixture(name: &str) -> String {
    let path = format!("{}/../../tests/fixtures/origin/scripts/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

/// script, frames (innermost first), op, parameter, bad values, chain, module built with
/// the broken size (class, line) when the guard names one.
type Case = (
    &'static str,
    &'static [usize],
    &'static str,
    &'static str,
    &'static [f64],
    Chain,
    Option<(&'static str, &'static [usize])>,
);

const CASES: &[Case] = &[
    ("bn_last_batch.py", &[15, 23], "batch_norm", "input", &[], Chain::Shape, None),
    ("flatten_wrong.py", &[26], "cross_entropy", "input", &[], Chain::Shape, None),
    ("gru_hidden_carry.py", &[19, 28], "gru", "hx", &[16.0], Chain::Shape, None),
    ("lstm_fixed_hidden.py", &[19, 26], "lstm", "hx", &[], Chain::Shape, None),
    ("collate_offset.py", &[26], "cross_entropy", "target", &[4.0], Chain::Value, None),
    ("ctc_no_blank.py", &[27], "ctc_loss", "targets", &[10.0], Chain::Value, Some(("Linear", &[13, 24]))),
    ("dict_batch_pad_label.py", &[41, 46], "cross_entropy", "target", &[-1.0], Chain::Value, None),
    ("embedding_neg_pad.py", &[24], "embedding", "input", &[-1.0], Chain::Value, None),
    ("float_labels.py", &[26], "cross_entropy", "target", &[], Chain::Dtype, None),
    ("graph_one_based_edges.py", &[18, 26], "index", "index", &[10.0], Chain::Value, None),
    ("label_map_start1.py", &[41, 48], "cross_entropy", "target", &[5.0], Chain::Value, None),
    ("late_cohort.py", &[23], "cross_entropy", "target", &[6.0], Chain::Value, Some(("Linear", &[17]))),
    (
        "long_sequence.py",
        &[24, 30],
        "embedding",
        "input",
        &[100.0, 105.0],
        Chain::Value,
        Some(("Embedding", &[19, 28])),
    ),
    ("ner_pad_minus1.py", &[49], "cross_entropy", "target", &[-1.0], Chain::Value, None),
    (
        "num_classes_from_max.py",
        &[14],
        "cross_entropy",
        "target",
        &[6.0],
        Chain::Value,
        Some(("Linear", &[11])),
    ),
    ("one_hot_classes.py", &[10, 18], "one_hot", "tensor", &[3.0], Chain::Value, None),
    ("onehot_to_ce.py", &[16], "nll_loss", "target", &[], Chain::Shape, None),
    ("positions_from_one.py", &[18, 24], "embedding", "input", &[32.0], Chain::Value, None),
    ("sample_no_softmax.py", &[12], "multinomial", "input", &[], Chain::Value, None),
    ("scatter_num_graphs.py", &[13, 16], "index_add", "index", &[3.0], Chain::Value, None),
    (
        "seg_void_255.py",
        &[32],
        "cross_entropy",
        "target",
        &[255.0],
        Chain::Value,
        Some(("CrossEntropyLoss", &[29])),
    ),
    ("species_csv.py", &[35], "cross_entropy", "target", &[3.0], Chain::Value, None),
    (
        "stale_class_list.py",
        &[26],
        "cross_entropy",
        "target",
        &[4.0, 5.0],
        Chain::Value,
        Some(("Linear", &[23])),
    ),
    ("target_n_by_1.py", &[24], "nll_loss", "target", &[], Chain::Shape, None),
    ("target_transform_shift.py", &[30], "cross_entropy", "target", &[6.0], Chain::Value, None),
    ("topk_gather.py", &[9], "gather", "index", &[20.0, 31.0], Chain::Value, None),
    ("vocab_grew.py", &[43], "embedding_bag", "input", &[11.0], Chain::Value, Some(("EmbeddingBag", &[23]))),
    ("workers_corrupt_label.py", &[32, 39], "cross_entropy", "target", &[99.0], Chain::Value, None),
];

/// The size of the table the values broke, as the guard reports it.
const BOUNDS: &[(&str, f64)] = &[("positions_from_one.py", 32.0), ("long_sequence.py", 100.0)];

/// The size the runtime saw a module built with, and what the data needs.
type Sizes = (Option<i64>, Option<i64>);

/// The size the runtime saw the module built with.
const SIZES: &[(&str, Sizes)] = &[
    ("late_cohort.py", (Some(6), Some(7))),
    ("num_classes_from_max.py", (Some(6), Some(7))),
    ("stale_class_list.py", (Some(4), Some(6))),
];

fn query_rows(op: &str, chain: Chain) -> bool {
    chain == Chain::Shape && matches!(op, "batch_norm" | "gru" | "lstm" | "cross_entropy")
}

fn origin_line(script: &str) -> usize {
    let labels = std::fs::read_to_string(format!(
        "{}/../../tests/fixtures/origin/labels.tsv",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let row = labels.lines().find(|l| l.split('\t').next() == Some(script)).unwrap();
    row.split('\t').nth(2).unwrap().parse().unwrap()
}

#[test]
fn the_labelled_origin_is_a_step_of_the_trail() {
    let mut missed = Vec::new();
    for (script, lines, op, parameter, bad, chain, module) in CASES {
        let p = Project::new(&[("s.py", &fixture(script))]);
        let frames: Vec<(&str, usize)> = lines.iter().map(|l| ("s.py", *l)).collect();
        let mut query = p.query(&frames, op, parameter, bad);
        query.chain = Some(*chain);
        // A batch dimension, for a batch-size mismatch or a batch of one sample.
        query.rows = query_rows(op, *chain);
        query.bad.bound = BOUNDS.iter().find(|(s, _)| s == script).map(|(_, b)| *b);
        let (value, size) = slice::with_project(p.sources(), |project| {
            let value = slice::trace(project, &query);
            let size = match module {
                Some((class, sites)) => {
                    let sites = sites
                        .iter()
                        .map(|l| Frame { file: p.path("s.py"), line: *l, function: None, columns: None })
                        .collect();
                    let (size, _) =
                        *SIZES.iter().find(|(s, _)| s == script).map(|(_, v)| v).unwrap_or(&(None, None));
                    Some(slice::trace_size(
                        project,
                        &SizeQuery { class: class.to_string(), sites, size, ..SizeQuery::default() },
                    ))
                }
                None if *chain == Chain::Value => Some(slice::trace_size_by_flow(project, &query, true)),
                None => None,
            };
            (value, size)
        });
        let shown = format!("{}{}", show(&value), size.as_ref().map(show).unwrap_or_default());
        for step in value.steps.iter().chain(size.iter().flat_map(|s| s.steps.iter())) {
            if step.role == Role::Made && matches!(step.chain, Chain::Value | Chain::Size) {
                let source = std::fs::read_to_string(&step.path).unwrap();
                assert!(
                    !only_moves::only_moves(&source, step.line),
                    "{script}: made on a line that only moves: {step:?}"
                );
            }
        }
        println!("=== {script}\n{shown}");
        let origin = origin_line(script);
        let named =
            value.steps.iter().chain(size.iter().flat_map(|s| s.steps.iter())).any(|s| s.line == origin);
        if !named {
            missed.push(format!("{script} (origin {origin}):\n{shown}"));
        }
    }
    assert!(missed.is_empty(), "{} missed:\n{}", missed.len(), missed.join("\n"));
}
