//! `assertscope scan` end to end: the real binary materialises the embedded package and
//! runs the user's DataLoader in a real Python with torch, with worker processes.

mod check_support;

use check_support::*;
use serde_json::json;

const TRAIN: &str = r#"
import torch
from torch.utils.data import Dataset, DataLoader

class Labels(Dataset):
    def __init__(self, n=103):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 4, generator=g)
        self.y = torch.randint(0, 10, (n,), generator=g)
        if n > 90:
            self.y[37] = 10
            self.y[90] = 12
            self.x[55, 2] = float("nan")

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        print("user output", i)
        return self.x[i], self.y[i]

train_loader = DataLoader(Labels(), batch_size=6, shuffle=True, num_workers=2,
                          generator=torch.Generator().manual_seed(1))

def clean_dataset():
    return Labels(64)

class Broken(Dataset):
    def __len__(self):
        return 10
    def __getitem__(self, i):
        if i == 7:
            raise KeyError("missing image 7.jpg")
        return torch.zeros(2), 1

broken = DataLoader(Broken(), batch_size=4)

padded_labels = torch.arange(200) % 4
padded_labels[17] = -1
padded_labels[[5, 6]] = -100
padded = DataLoader(torch.utils.data.TensorDataset(torch.zeros(200, 2), padded_labels), batch_size=16)

if __name__ == "__main__":
    raise SystemExit("training must not start during a scan")
"#;

fn scan(dir: &std::path::Path, args: &[&str]) -> Run {
    let python = python();
    let mut all = vec!["scan"];
    all.extend_from_slice(args);
    all.extend(["--python", python.to_str().unwrap()]);
    assertscope(dir, &all)
}

#[test]
fn reports_dataset_indices_with_workers_and_shuffling() {
    if !has_modules(&["torch"]) {
        return;
    }
    let dir = tempdir();
    std::fs::write(dir.path().join("train.py"), TRAIN).unwrap();
    let run = scan(dir.path(), &["train.py:train_loader", "--num-classes", "10", "--json"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let d = run.diagnosis("target-out-of-range");
    let mut indices: Vec<i64> =
        d["values"]["first_indices"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
    indices.sort();
    assert_eq!(indices, vec![37, 90]);
    assert_eq!(d["values"]["bad_count"], 2);
    assert_eq!(d["location"]["file"], "train.py");
    assert_eq!(d["location"]["function"], "train_loader");
    let nan = run.diagnosis("nan-inf");
    assert_eq!(nan["values"]["first_indices"], json!([55]));
    assert!(run.secondary().iter().any(|(c, _)| c == "batchnorm-single-sample"), "{:?}", run.secondary());
    // The user's prints went to stderr, not into the JSON.
    assert!(run.stderr.contains("user output"));
}

#[test]
fn a_function_returning_a_clean_dataset_exits_0() {
    if !has_modules(&["torch"]) {
        return;
    }
    let dir = tempdir();
    std::fs::write(dir.path().join("train.py"), TRAIN).unwrap();
    let run = scan(dir.path(), &["train.py:clean_dataset", "--num-classes", "10", "--batch-size", "16"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("4 batches, 64 samples"), "{}", run.stdout);
    assert!(run.stdout.contains("ok: every batch passed"));
}

#[test]
fn a_failing_dataset_or_a_bad_target_is_one_line_and_exit_2() {
    if !has_modules(&["torch"]) {
        return;
    }
    let dir = tempdir();
    std::fs::write(dir.path().join("train.py"), TRAIN).unwrap();
    let run = scan(dir.path(), &["train.py:broken", "--num-classes", "2"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    let last = run.stderr.trim_end().lines().last().unwrap();
    assert!(last.contains("batch 1 (dataset indices 4, 5, 6, 7)") && last.contains("KeyError"), "{last}");
    let run = scan(dir.path(), &["train.py:nothing_here"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("has no attribute 'nothing_here'") && run.stderr.contains("train_loader"),
        "{}",
        run.stderr
    );
    let run = scan(dir.path(), &["missing.py:x"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("missing.py: no such file"), "{}", run.stderr);
}

#[test]
fn the_histogram_counts_every_label_with_negative_and_ignored_ones_flagged() {
    if !has_modules(&["torch"]) {
        return;
    }
    let dir = tempdir();
    std::fs::write(dir.path().join("train.py"), TRAIN).unwrap();
    let run = scan(dir.path(), &["train.py:padded", "--num-classes", "4"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let bar = |label: &str| {
        run.stdout
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{label} │")))
            .unwrap_or_else(|| panic!("no bar for {label}:\n{}", run.stdout))
            .to_string()
    };
    // 200 labels: the percentages are of all of them, -1 and the ignored -100 included.
    assert!(bar("0").ends_with(" 50  25.0%"), "{}", bar("0"));
    assert!(bar("1").ends_with(" 48  24.0%"), "{}", bar("1"));
    assert!(bar("-1").ends_with(" 1   0.5%  ← out of range"), "{}", bar("-1"));
    assert!(bar("-100").ends_with(" 2   1.0%  (ignored)"), "{}", bar("-100"));
}

/// The label rules exist once: the same labels as a file (`check`) and as the batches of
/// a DataLoader (`scan`) give the same findings, causes and words.
#[test]
fn scan_and_check_judge_the_same_labels_alike() {
    if !has_modules(&["torch", "numpy"]) {
        return;
    }
    let dir = tempdir();
    py(
        dir.path(),
        "import numpy as np\n\
         y = np.arange(1, 61) % 10 + 1\n\
         y[[4, 41]] = [-1, -7]\n\
         np.save('one_based.npy', y.astype(np.int64))\n\
         np.save('one_hot.npy', np.eye(4, dtype=np.int64)[np.arange(30) % 4])\n\
         np.save('floats.npy', (np.arange(30) % 3).astype(np.float32))\n",
    );
    std::fs::write(
        dir.path().join("loaders.py"),
        "import numpy as np, torch\n\
         from torch.utils.data import DataLoader, TensorDataset\n\
         def loader(name):\n\
         \x20   y = torch.from_numpy(np.load(name + '.npy'))\n\
         \x20   return DataLoader(TensorDataset(torch.zeros(len(y), 2), y), batch_size=8)\n\
         one_based = lambda: loader('one_based')\n\
         one_hot = lambda: loader('one_hot')\n\
         floats = lambda: loader('floats')\n",
    )
    .unwrap();
    for (name, classes) in [("one_based", "10"), ("one_hot", "4"), ("floats", "3")] {
        let args = ["--num-classes", classes, "--ignore-index", "-100", "--json"];
        let file = format!("{name}.npy");
        let mut check_args = vec!["check", file.as_str()];
        check_args.extend(args);
        let checked = assertscope(dir.path(), &check_args);
        let target = format!("loaders.py:{name}");
        let scanned = scan(dir.path(), &[&[target.as_str()][..], &args[..]].concat());
        assert_eq!(checked.code, scanned.code, "{name}:\n{}\n{}", checked.stdout, scanned.stderr);
        let findings = |run: &Run, prefix: &str| -> Vec<(String, String)> {
            let json = run.json();
            let mut all: Vec<(String, String)> = json["diagnoses"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| (d["cause"].as_str().unwrap().to_string(), d["evidence"][0]["text"].to_string()))
                .chain(run.secondary().into_iter().map(|(c, t)| (c, format!("{t:?}"))))
                .map(|(c, t)| (c, t.replacen(prefix, "", 1)))
                .collect();
            all.sort();
            all
        };
        let from_file = findings(&checked, "");
        assert!(!from_file.is_empty() && from_file[0].0 != "none", "{name}: {from_file:?}");
        assert_eq!(from_file, findings(&scanned, "batch[1]: "), "{name}");
    }
}
