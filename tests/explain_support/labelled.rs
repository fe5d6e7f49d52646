//! The labelled sets of logs (`tests/fixtures/devset`, `public`, `public2`): each log with the
//! root cause and user frame its `index.tsv` gives, the answer `explain` gives, and the score
//! of those answers. Shared by the scoring tests of the sets and the mutation suite.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// One log of a set and what it should be diagnosed as.
pub struct Labelled {
    pub id: String,
    pub cause: String,
    pub user_frame: String,
    pub path: PathBuf,
    /// The log's text, as a paste: invalid UTF-8 replaced, not refused.
    pub text: String,
}

/// The logs of `tests/fixtures/<set>`, in the order of its `index.tsv` (columns: id, cause,
/// op, user_frame, …; the log of id `X` is `X.log`).
pub fn set(name: &str) -> Vec<Labelled> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    let index = std::fs::read_to_string(dir.join("index.tsv")).unwrap();
    index
        .lines()
        .skip(1)
        .map(|row| {
            let cols: Vec<&str> = row.split('\t').collect();
            assert!(cols.len() >= 4, "{name}/index.tsv: a row with {} columns: {row}", cols.len());
            let path = dir.join(format!("{}.log", cols[0]));
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            Labelled { id: cols[0].into(), cause: cols[1].into(), user_frame: cols[3].into(), path, text }
        })
        .collect()
}

/// The root cause and user frame (`file:line`, `-` for none) that `assertscope explain --json`
/// gives for the file at `path`; cause `none` when it finds no error.
pub fn explain_file(path: &Path) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_assertscope"))
        .args(["explain", "--json"])
        .arg(path)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{}: not JSON ({e}): {}", path.display(), String::from_utf8_lossy(&out.stderr))
    });
    let root = &json["diagnoses"][0];
    let cause = root["cause"].as_str().unwrap_or("none").to_string();
    let frame = match &root["location"] {
        serde_json::Value::Null => "-".to_string(),
        l => format!("{}:{}", l["file"].as_str().unwrap(), l["line"]),
    };
    (cause, frame)
}

/// What `explain` answered for one log, against its label.
pub struct Outcome {
    pub id: String,
    pub cause: String,
    pub frame: String,
    pub want_cause: String,
    pub want_frame: String,
}

impl Outcome {
    pub fn cause_ok(&self) -> bool {
        self.cause == self.want_cause
    }

    pub fn frame_ok(&self) -> bool {
        self.frame == self.want_frame
    }

    /// `q007: got cascade -, want index-out-of-bounds -`
    pub fn miss_line(&self) -> String {
        format!(
            "{}: got {} {}, want {} {}",
            self.id, self.cause, self.frame, self.want_cause, self.want_frame
        )
    }
}

/// The outcomes of an answer on a set: how many logs got their cause and their frame right.
pub struct Score {
    pub outcomes: Vec<Outcome>,
}

impl Score {
    /// Scores `answer` (cause, frame) on each log of `logs`; `None` skips a log (the answer
    /// does not apply to it).
    pub fn of(logs: &[Labelled], mut answer: impl FnMut(&Labelled) -> Option<(String, String)>) -> Score {
        let outcomes = logs
            .iter()
            .filter_map(|log| {
                let (cause, frame) = answer(log)?;
                Some(Outcome {
                    id: log.id.clone(),
                    cause,
                    frame,
                    want_cause: log.cause.clone(),
                    want_frame: log.user_frame.clone(),
                })
            })
            .collect();
        Score { outcomes }
    }

    pub fn total(&self) -> usize {
        self.outcomes.len()
    }

    pub fn causes(&self) -> usize {
        self.outcomes.iter().filter(|o| o.cause_ok()).count()
    }

    pub fn frames(&self) -> usize {
        self.outcomes.iter().filter(|o| o.frame_ok()).count()
    }

    pub fn misses(&self) -> impl Iterator<Item = &Outcome> {
        self.outcomes.iter().filter(|o| !o.cause_ok() || !o.frame_ok())
    }

    pub fn cause_rate(&self) -> f64 {
        self.causes() as f64 / self.total().max(1) as f64
    }

    pub fn frame_rate(&self) -> f64 {
        self.frames() as f64 / self.total().max(1) as f64
    }

    /// `cause 80/82 (97.6%), frame 78/82 (95.1%)`
    pub fn summary(&self) -> String {
        let total = self.total();
        format!(
            "cause {}/{total} ({:.1}%), frame {}/{total} ({:.1}%)",
            self.causes(),
            self.cause_rate() * 100.0,
            self.frames(),
            self.frame_rate() * 100.0
        )
    }
}
