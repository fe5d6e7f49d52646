//! What every data-file fuzz target does with its input: the bytes become a file of one
//! format, which `check` reads through its whole pipeline (plan, parallel read, checks,
//! report, rendering) and `--features` counts. Every input must end in a report or a
//! one-line error naming the file, never a panic that escapes, within libFuzzer's
//! per-input time limit (`-timeout`) and memory limit (`-rss_limit_mb`, `-malloc_limit_mb`).
//!
//! Panics inside a decoding dependency are caught at the reader boundary and become that
//! one-line error. Each one caught is appended to `$ASSERTSCOPE_FUZZ_CONTAINED` when set (the
//! error line: the panic's message and place), so that a run lists the dependency panics
//! it met; a panic caught in assertscope's own code is a bug and fails the input.

use assertscope::check::read::{self, guard, Header};
use assertscope::check::{self, CheckOptions};
use assertscope::render::style::Palette;
use std::io::Write;

/// Reads `data` as a file with extension `ext`. The column is always `label`: the seed
/// files name their label column, tensor or NPZ member so.
pub fn check_file(ext: &str, data: &[u8]) {
    let dir = std::env::temp_dir().join(format!("assertscope-fuzz-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("input.{ext}"));
    std::fs::write(&path, data).expect("writing the fuzz input");
    let shown = path.to_string_lossy().into_owned();
    let mut opts = CheckOptions { inputs: vec![path.clone()], ..CheckOptions::default() };
    opts.read.column = Some("label".to_string());
    opts.read.header = Header::Auto;
    opts.num_classes = Some(10);
    opts.max_positions = Some(8);
    opts.ignore_index = Some(-100);
    let before = guard::contained_panics();
    match check::inspect(&opts) {
        Ok(outcome) => {
            let report = check::report::build(&outcome);
            assert!(!report.diagnoses.is_empty());
            let _ = check::render::human(&outcome, &Palette::new(false));
        }
        Err(e) => one_line_naming(&e.to_string(), &shown),
    }
    let file = check::input::InputFile {
        path: path.clone(),
        format: check::input::Format::from_extension(&path).unwrap(),
    };
    if let Err(e) = read::count_rows(&file, &opts.read) {
        one_line_naming(&e.to_string(), &shown);
    }
    if guard::contained_panics() > before {
        record_contained(&shown);
    }
}

fn one_line_naming(message: &str, path: &str) {
    assert!(!message.contains('\n'), "an error of several lines: {message}");
    assert!(
        message.contains(path) || message.contains("input."),
        "an error that does not name the file: {message}"
    );
    if message.contains("the decoder failed") {
        assert!(
            !message.contains("labels/src/"),
            "a panic in assertscope's own reader, caught at the boundary: {message}"
        );
        LAST_CONTAINED.with(|l| *l.borrow_mut() = Some(message.to_string()));
    }
}

thread_local! {
    static LAST_CONTAINED: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

fn record_contained(path: &str) {
    let Some(log) = std::env::var_os("ASSERTSCOPE_FUZZ_CONTAINED") else { return };
    let line = LAST_CONTAINED.with(|l| l.borrow_mut().take()).unwrap_or_default().replace(path, "FILE");
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(log) {
        let _ = writeln!(f, "{line}");
    }
}
