//! Feeds arbitrary bytes to the CSV/TSV/text and NPY readers through the whole check
//! pipeline (plan, parallel read, checks, report, rendering): every input must end in a
//! report or a one-line error, never a panic.
//!
//! The first byte picks the format and options; the rest is the file.

#![no_main]

use assertscope::check::read::Header;
use assertscope::check::{self, CheckOptions};
use assertscope::render::style::Palette;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else { return };
    let ext = match selector % 4 {
        0 => "csv",
        1 => "npy",
        2 => "tsv",
        _ => "txt",
    };
    let mut bytes = Vec::with_capacity(body.len() + 10);
    if ext == "npy" && selector & 0x20 != 0 {
        // Reach the header dict parser more often.
        bytes.extend_from_slice(b"\x93NUMPY\x01\x00");
    }
    bytes.extend_from_slice(body);
    let dir = std::env::temp_dir().join(format!("assertscope-fuzz-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("input.{ext}"));
    std::fs::write(&path, &bytes).expect("writing the fuzz input");
    let mut opts = CheckOptions { inputs: vec![path.clone()], ..CheckOptions::default() };
    opts.num_classes = (selector & 0x04 != 0).then_some(10);
    opts.max_positions = (selector & 0x08 != 0).then_some(4);
    opts.read.column = (selector & 0x10 != 0).then(|| "1".to_string());
    opts.read.header = if selector & 0x40 != 0 { Header::No } else { Header::Auto };
    opts.ignore_index = (selector & 0x80 != 0).then_some(-100);
    if let Ok(outcome) = check::inspect(&opts) {
        let report = check::report::build(&outcome);
        assert!(!report.diagnoses.is_empty());
        let _ = check::render::human(&outcome, &Palette::new(false));
    }
});
