//! Each kind of problem `check` knows, planted in real files, gives its taxonomy cause,
//! the right numbers and the first offending rows; clean data gives exit 0.

mod check_support;

use check_support::*;
use serde_json::json;

#[test]
fn clean_labels_exit_0_with_the_class_counts() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(dir.path(), "import numpy as np\nnp.save('y.npy', np.arange(1000) % 10)");
    let run = check_json(dir.path(), &["y.npy", "--num-classes", "10"], 0);
    assert_eq!(run.causes(), vec!["none"]);
    let d = run.diagnosis("none");
    assert_eq!(d["values"]["class_counts"]["3"], 100);
    assert_eq!(d["values"]["rows"], 1000);
    let human = assertscope(dir.path(), &["check", "y.npy", "--num-classes", "10"]);
    assert_eq!(human.code, 0);
    assert!(human.stdout.contains("ok: no problem found"), "{}", human.stdout);
    assert!(human.stdout.contains(" 9 │████"), "histogram:\n{}", human.stdout);
}

#[test]
fn negative_labels_and_the_ignore_index() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(
        dir.path(),
        "import numpy as np\ny = np.arange(100) % 5\ny[[3, 50]] = -1\ny[7] = -100\nnp.save('y.npy', y)",
    );
    let run = check_json(dir.path(), &["y.npy", "--num-classes", "5"], 1);
    let d = run.diagnosis("target-out-of-range");
    assert_eq!(d["values"]["bad_count"], 3);
    assert_eq!(d["values"]["first_rows"], json!([3, 7, 50]));
    let run = check_json(dir.path(), &["y.npy", "--num-classes", "5", "--ignore-index", "-100"], 1);
    let d = run.diagnosis("target-out-of-range");
    assert_eq!(d["values"]["first_rows"], json!([3, 50]));
    assert!(d["evidence"][0]["text"].as_str().unwrap().contains("not the ignore index -100"), "{d}");
}

#[test]
fn one_based_labels_are_named_as_such() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(dir.path(), "import numpy as np\nnp.save('y.npy', np.arange(100) % 10 + 1)");
    let run = check_json(dir.path(), &["y.npy", "--num-classes", "10"], 1);
    // The hint is the diagnosis' fix (it replaces the cause's general one), not part of what was found.
    let fix = run.diagnosis("target-out-of-range")["fix"].as_str().unwrap().to_string();
    assert!(fix.contains("1-based") && fix.contains("give the model 11 outputs"), "{fix}");
    // Without a bound: a warning, and the inferred number of classes.
    let run = check_json(dir.path(), &["y.npy"], 0);
    let notes = run.secondary();
    assert!(notes.iter().any(|(_, t)| t.contains("start at 1")), "{notes:?}");
    assert!(notes.iter().any(|(_, t)| t.contains("at least 11 outputs")), "{notes:?}");
}

#[test]
fn one_hot_and_multi_hot_rows() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(
        dir.path(),
        "import numpy as np\nrng = np.random.default_rng(1)\nnp.save('onehot.npy', np.eye(10, dtype=np.int64)[rng.integers(0, 10, 200)])\nm = (rng.random((200, 10)) > 0.7).astype(np.float32)\nnp.save('multihot.npy', m)",
    );
    let run = check_json(dir.path(), &["onehot.npy", "--num-classes", "10"], 1);
    assert_eq!(run.causes(), vec!["target-shape"]);
    assert!(run.stdout.contains("one-hot"));
    let run = check_json(dir.path(), &["multihot.npy", "--num-classes", "10"], 1);
    assert!(run.causes().contains(&"target-shape".to_string()));
    assert!(run.stdout.contains("multi-hot"));
    // As multilabel targets they are fine; with the wrong width they are not.
    check_json(dir.path(), &["multihot.npy", "--num-classes", "10", "--task", "multilabel"], 0);
    let run = check_json(dir.path(), &["multihot.npy", "--num-classes", "12", "--task", "multilabel"], 1);
    assert_eq!(run.causes(), vec!["target-shape"]);
}

#[test]
fn float_labels_whole_and_not_nan_and_empty_fields() {
    let dir = tempdir();
    py(
        dir.path(),
        "open('whole.csv', 'w').write('label\\n' + ''.join(f'{i % 3}.0\\n' for i in range(30)))\nopen('frac.csv', 'w').write('label\\n1\\n2.5\\n0\\n')\nopen('nan.csv', 'w').write('label\\n1\\nnan\\n\\n0\\ninf\\n')\nopen('gap.csv', 'w').write('id,label\\n0,1\\n1,\\n2,0\\n')",
    );
    let run = check_json(dir.path(), &["whole.csv", "--num-classes", "3"], 1);
    let d = run.diagnosis("target-dtype");
    assert_eq!(d["confidence"], "medium");
    let run = check_json(dir.path(), &["frac.csv", "--num-classes", "3"], 1);
    let d = run.diagnosis("target-dtype");
    assert_eq!(d["values"]["first_rows"], json!([1]));
    assert_eq!(d["location"]["line"], 3);
    let run = check_json(dir.path(), &["nan.csv", "--num-classes", "3"], 1);
    assert_eq!(run.diagnosis("nan-inf")["values"]["bad_count"], 2);
    let run = check_json(dir.path(), &["gap.csv", "--column", "label", "--num-classes", "3"], 1);
    let d = run.diagnosis("nan-inf");
    assert_eq!(d["values"]["first_rows"], json!([1]));
}

#[test]
fn text_labels_are_not_class_ids() {
    let dir = tempdir();
    py(dir.path(), "open('names.csv', 'w').write('file,label\\na.jpg,cat\\nb.jpg,dog\\n')");
    let run = check_json(dir.path(), &["names.csv", "--column", "label"], 1);
    assert_eq!(run.causes(), vec!["target-dtype"]);
    assert!(run.stdout.contains("label2id"));
}

#[test]
fn empty_files_and_columns() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(
        dir.path(),
        "import numpy as np, pyarrow as pa, pyarrow.parquet as pq\nopen('head.csv', 'w').write('label\\n')\nnp.save('none.npy', np.zeros(0, dtype=np.int64))\npq.write_table(pa.table({'label': pa.array([], pa.int64())}), 'e.parquet')\nopen('ok.csv', 'w').write('label\\n1\\n')",
    );
    for file in ["head.csv", "none.npy", "e.parquet"] {
        let run = check_json(dir.path(), &[file, "--num-classes", "3"], 1);
        assert_eq!(run.causes(), vec!["empty-tensor"], "{file}");
    }
    let run = check_json(dir.path(), &["ok.csv", "head.csv", "--num-classes", "3"], 1);
    assert_eq!(run.causes(), vec!["empty-tensor"]);
    assert!(run.stdout.contains("head.csv"));
}

#[test]
fn features_and_labels_row_counts() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(
        dir.path(),
        "import numpy as np\nnp.save('X.npy', np.zeros((100, 4), dtype=np.float32))\nnp.save('y.npy', np.arange(99) % 3)\nnp.save('y_ok.npy', np.arange(100) % 3)\nopen('X.csv', 'w').write('a,b\\n' + '1.0,2.0\\n' * 100)",
    );
    let run = check_json(dir.path(), &["y.npy", "--num-classes", "3", "--features", "X.npy"], 1);
    let d = run.diagnosis("batch-size-mismatch");
    assert_eq!(
        (d["values"]["feature_rows"].clone(), d["values"]["label_rows"].clone()),
        (json!(100), json!(99))
    );
    // The fix is about pairing rows, not the flatten of a batch-size mismatch in a model.
    let fix = d["fix"].as_str().unwrap();
    assert!(fix.contains("row i of one belongs to row i of the other") && !fix.contains("flatten"), "{fix}");
    let human = assertscope(dir.path(), &["check", "y.npy", "--num-classes", "3", "--features", "X.npy"]);
    let help = human.stdout.lines().find(|l| l.contains("= help:")).unwrap_or_default();
    assert!(
        help.contains("Rebuild the features and the labels") && !help.contains("flatten"),
        "{}",
        human.stdout
    );
    check_json(dir.path(), &["y_ok.npy", "--num-classes", "3", "--features", "X.npy"], 0);
    check_json(dir.path(), &["y_ok.npy", "--num-classes", "3", "--features", "X.csv"], 0);
}

#[test]
fn the_ignore_index_is_not_the_range_of_the_ids() {
    has_modules(&["numpy", "PIL"]);
    let dir = tempdir();
    py(
        dir.path(),
        "import numpy as np, os\nfrom PIL import Image\nos.mkdir('masks')\n\
         for i in range(3):\n    m = np.zeros((8, 8), np.uint8)\n    m[0, :4] = 255\n\
         \x20   if i == 1: m[2, :] = 30\n    Image.fromarray(m).save(f'masks/{i}.png')\n\
         y = np.arange(100) % 10 + 1\ny[[4, 9]] = -100\nnp.save('one_based.npy', y)",
    );
    let args = ["masks", "--task", "segmentation", "--num-classes", "21", "--ignore-index", "255"];
    let run = check_json(dir.path(), &args, 1);
    let d = run.diagnosis("target-out-of-range");
    let text = d["evidence"][0]["text"].as_str().unwrap();
    assert_eq!(text, "8 mask pixels are >= num_classes 21 (max 30)");
    assert_eq!(
        (d["values"]["max"].clone(), d["values"]["bad_values"].clone()),
        (json!(30), json!([{"value": 30, "count": 8}]))
    );
    // -100 is padding the loss skips: the labels still read as 1-based, with or without a bound.
    let run = check_json(dir.path(), &["one_based.npy", "--num-classes", "10", "--ignore-index", "-100"], 1);
    let d = run.diagnosis("target-out-of-range");
    let (text, fix) = (d["evidence"][0]["text"].as_str().unwrap(), d["fix"].as_str().unwrap());
    assert!(
        text.contains("(min 1, max 10, and 0 never appears)") && fix.contains("1-based"),
        "{text} / {fix}"
    );
    let run = check_json(dir.path(), &["one_based.npy", "--ignore-index", "-100"], 0);
    let notes = run.secondary();
    assert!(notes.iter().any(|(_, t)| t.contains("start at 1 (min 1, max 10")), "{notes:?}");
    assert!(
        notes.iter().any(|(_, t)| t.contains("span 1..=10, so the model needs at least 11 outputs")),
        "{notes:?}"
    );
}

#[test]
fn binary_targets_outside_0_1() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(dir.path(), "import numpy as np\ny = np.where(np.arange(50) % 2 == 0, 1, -1)\nnp.save('pm.npy', y)\nnp.save('ok.npy', (np.arange(50) % 2).astype(np.float32))");
    let run = check_json(dir.path(), &["pm.npy", "--task", "binary"], 1);
    assert_eq!(run.causes(), vec!["bce-input-range"]);
    check_json(dir.path(), &["ok.npy", "--task", "binary"], 0);
}

#[test]
fn unseen_classes_and_gaps_are_warnings() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(dir.path(), "import numpy as np\ny = np.array([0, 1, 2, 4, 5] * 20)\nnp.save('y.npy', y)");
    let run = check_json(dir.path(), &["y.npy", "--num-classes", "8"], 0);
    let notes = run.secondary();
    assert!(
        notes
            .iter()
            .any(|(c, t)| c == "target-out-of-range" && t.contains("3 of 8 classes never appear: 3, 6, 7")),
        "{notes:?}"
    );
    let run = check_json(dir.path(), &["y.npy"], 0);
    assert!(
        run.secondary().iter().any(|(_, t)| t.contains("not contiguous") && t.contains(": 3")),
        "{:?}",
        run.secondary()
    );
}

/// The whole human rendering, as a user sees it (colours off).
#[test]
fn human_output_snapshot() {
    let dir = tempdir();
    std::fs::write(dir.path().join("labels.csv"), "id,label\n0,1\n1,0\n2,3\n3,2\n4,1\n5,-1\n6,2\n").unwrap();
    let run = assertscope(dir.path(), &["check", "labels.csv", "--column", "label", "--num-classes", "3"]);
    assert_eq!(run.code, 1);
    let expected = "\
labels.csv: 7 rows, column `label` (int)
  min -1, max 3; num_classes 3; task classification

   0 │████████████████████                     1  14.3%
   1 │████████████████████████████████████████ 2  28.6%
   2 │████████████████████████████████████████ 2  28.6%
  -1 │████████████████████                     1  14.3%  ← out of range
   3 │████████████████████                     1  14.3%  ← out of range

error[target-out-of-range]: 1 label is >= num_classes 3 (max 3)
 --> labels.csv:4:1
  |
4 | 2,3
  | ^^^ row 2: 3
  |
  = note: class target out of range; `assertscope rules target-out-of-range` explains it
  = help: Make every label lie in 0..C-1 or equal ignore_index.

error[target-out-of-range]: 1 label is negative (min -1)
 --> labels.csv:7:1
  |
7 | 5,-1
  | ^^^^ row 5: -1
  |
  = note: class target out of range; `assertscope rules target-out-of-range` explains it
  = help: -1 looks like a padding label, but the loss skips only labels equal to its ignore_index
          (-100 unless set): pass ignore_index=-1 to the loss, or pad with the ignore_index. Pass
          --ignore-index -1 to skip it here as well.

2 problems found
";
    assert_eq!(run.stdout, expected);
}

/// Rows of several class ids are per-position labels (token classification: targets
/// `[N, L]` with scores `[N, C, L]`), which cross_entropy takes: a warning, not an error.
#[test]
fn rows_of_several_class_ids_are_a_warning() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(
        dir.path(),
        "import numpy as np\ny = np.arange(60).reshape(12, 5) % 7\ny[:, 4] = -100\nnp.save('y.npy', y)",
    );
    let run = check_json(dir.path(), &["y.npy", "--num-classes", "7", "--ignore-index", "-100"], 0);
    let notes = run.secondary();
    assert!(
        notes.iter().any(|(c, t)| c == "target-shape" && t.contains("per-position scores ([N, C, 5])")),
        "{notes:?}"
    );
}
