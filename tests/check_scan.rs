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

const SHAPES: &str = r#"
import os, time, torch
from torch.utils.data import Dataset, DataLoader

class NoLabelKey(Dataset):
    def __len__(self): return 40
    def __getitem__(self, i): return {"input_ids": torch.arange(5), "cls": torch.tensor(i % 12)}

class ListLabels(Dataset):
    def __len__(self): return 40
    def __getitem__(self, i): return torch.zeros(3), [i % 15, (i + 1) % 15]

def keep_lists(items):
    return torch.stack([x for x, _ in items]), [y for _, y in items]

class RaggedLabels(Dataset):
    def __len__(self): return 40
    def __getitem__(self, i): return torch.zeros(3), [j * 4 for j in range(i % 4 + 1)]

no_label_key = NoLabelKey()
list_labels = DataLoader(ListLabels(), batch_size=8)
ragged_labels = DataLoader(RaggedLabels(), batch_size=8, collate_fn=keep_lists)

class Slow(Dataset):
    def __len__(self): return 100000
    def __getitem__(self, i):
        if i == 0:
            with open("child.pid", "w") as f:
                f.write(str(os.getpid()))
        end = time.time() + 0.01
        while time.time() < end:
            pass
        return torch.zeros(2), 1

slow = DataLoader(Slow(), batch_size=4)
"#;

#[test]
fn labels_not_found_are_a_warning_showing_the_batches_never_ok() {
    // Before: "ok: every batch passed", having checked no label.
    if !has_modules(&["torch"]) {
        return;
    }
    let dir = tempdir();
    std::fs::write(dir.path().join("shapes.py"), SHAPES).unwrap();
    let run = scan(dir.path(), &["shapes.py:no_label_key", "--num-classes", "10", "--no-progress"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains("ok"), "{}", run.stdout);
    assert!(run.stdout.contains("warning: no labels checked"), "{}", run.stdout);
    assert!(run.stdout.contains("batch['cls']: int64 tensor [40]"), "{}", run.stdout);
    assert!(run.stdout.contains("--label-key"), "{}", run.stdout);
    let json = scan(dir.path(), &["shapes.py:no_label_key", "--num-classes", "10", "--json"]);
    assert_eq!(json.json()["diagnoses"][0]["values"]["labels_checked"], false);
    assert!(json.secondary().iter().any(|(_, t)| t.contains("batch['input_ids']: int64 tensor [40, 5]")));
    // Named, they are checked: 10 and 11 are past 10 classes.
    let run =
        scan(dir.path(), &["shapes.py:no_label_key", "--num-classes", "10", "--label-key", "cls", "--json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.diagnosis("target-out-of-range")["values"]["bad_count"], 6);
}

#[test]
fn per_sample_label_lists_are_checked_collated_or_ragged() {
    // Before: default_collate's list of per-position tensors was taken for a batch of 2
    // (a batch-size mismatch), and a collate_fn's lists of lists for text.
    if !has_modules(&["torch"]) {
        return;
    }
    let dir = tempdir();
    std::fs::write(dir.path().join("shapes.py"), SHAPES).unwrap();
    let run = scan(dir.path(), &["shapes.py:list_labels", "--num-classes", "10", "--json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.causes()[0], "target-out-of-range");
    // i % 15 and (i + 1) % 15 over 40 samples: 21 of the 80 labels are 10 or more.
    assert_eq!(run.diagnosis("target-out-of-range")["values"]["bad_count"], 21);
    let run = scan(dir.path(), &["shapes.py:ragged_labels", "--num-classes", "10", "--json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let d = run.diagnosis("target-out-of-range");
    // Samples with 4 labels (i % 4 == 3) hold 12: 10 of them.
    assert_eq!(d["values"]["bad_count"], 10);
    assert_eq!(d["values"]["first_indices"][0], 3);
}

#[test]
fn a_python_without_torch_or_a_missing_file_is_one_line() {
    // Before (issue #24): a Python traceback, then the line.
    let dir = tempdir();
    let venv = dir.path().join("venv");
    let made = std::process::Command::new(python())
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !made {
        skip("cannot make a virtual environment without torch");
        return;
    }
    let bare = venv.join("bin/python");
    let args = |target: &'static str| ["scan", target, "--python", bare.to_str().unwrap()];
    std::fs::write(dir.path().join("train.py"), TRAIN).unwrap();
    for (target, expect) in
        [("missing.py:fn", "missing.py: no such file"), ("train.py:train_loader", "cannot import torch")]
    {
        let run = assertscope(dir.path(), &args(target));
        assert_eq!(run.code, 2, "{target}: {}", run.stderr);
        let err = run.stderr.trim_end();
        assert_eq!(err.lines().count(), 1, "{target}: {err}");
        assert!(err.contains(expect) && !err.contains("Traceback"), "{target}: {err}");
    }
}

/// Starts `scan shapes.py:slow` in a process group of its own (as a shell runs a job), its
/// stderr to a file, and returns it with the pid of its Python child once the child is
/// iterating.
#[expect(clippy::zombie_processes, reason = "the child is returned to the caller, which waits on it")]
fn start_slow_scan(dir: &std::path::Path) -> (std::process::Child, i32) {
    use std::os::unix::process::CommandExt;
    std::fs::write(dir.join("shapes.py"), SHAPES).unwrap();
    let python = python();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_assertscope"))
        .args(["scan", "shapes.py:slow", "--no-progress", "--python", python.to_str().unwrap()])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(dir.join("stderr.txt")).unwrap())
        .process_group(0)
        .spawn()
        .unwrap();
    let pid_file = dir.join("child.pid");
    let start = std::time::Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file).ok().and_then(|s| s.trim().parse().ok()) {
            return (child, pid);
        }
        if start.elapsed() > std::time::Duration::from_secs(300) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the scan never started");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[test]
fn a_signal_ends_the_python_worker_and_the_scan_quietly() {
    // Before: `kill -TERM` left the worker running at 100% CPU, reparented to PID 1; Ctrl-C
    // printed its KeyboardInterrupt traceback after the shell prompt.
    if !has_modules(&["torch"]) {
        return;
    }
    for (signal, whom, code) in
        [(libc::SIGTERM, "the scan", 143), (libc::SIGINT, "the terminal's group", 130)]
    {
        let dir = tempdir();
        let (mut child, worker) = start_slow_scan(dir.path());
        let target = if signal == libc::SIGINT { -(child.id() as i32) } else { child.id() as i32 };
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(target, signal) };
        let status = child.wait().unwrap();
        let outlived = alive(worker);
        if outlived {
            // SAFETY: as above; the worker is this test's.
            unsafe { libc::kill(worker, libc::SIGKILL) };
        }
        use std::os::unix::process::ExitStatusExt;
        let code_seen = status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
        assert!(!outlived, "signal {signal} to {whom}: the Python worker {worker} outlived the scan");
        assert_eq!(code_seen, code, "signal {signal} to {whom}");
        let stderr = std::fs::read_to_string(dir.path().join("stderr.txt")).unwrap();
        assert!(!stderr.contains("Traceback") && !stderr.contains("KeyboardInterrupt"), "{stderr}");
    }
}
