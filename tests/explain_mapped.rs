//! The mapped reader (prefilter over chunks in parallel) against the streaming reader:
//! on every development and public log, and on every paste mutation (and every fourth
//! hand edit) of the development logs, both scans are the same, field for field, whatever
//! the chunk size (tiny chunks put a chunk boundary inside every line and literal).

#[path = "explain_support/mutations.rs"]
mod mutations;

use assertscope::diagnose;
use assertscope::log::{self, prefilter, prefilter::Reach};
use std::io::Write;
use std::path::Path;

/// A temporary file holding `text`, mapped.
fn mapped(text: &[u8]) -> (tempfile::NamedTempFile, memmap2::Mmap) {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(text).unwrap();
    file.flush().unwrap();
    // SAFETY: a private temporary file, not changed while mapped.
    let map = unsafe { memmap2::Mmap::map(file.as_file()) }.unwrap();
    (file, map)
}

/// (chunk, batch) sizes: boundaries inside nearly every line and literal, a few per log,
/// and the defaults' shape.
const CHUNKINGS: &[(usize, usize)] = &[(7, 23), (64, 256), (4096, 4096 * 16)];

/// The directories of real logs: the development set, both sets from public threads, and the
/// format samples.
const REAL_LOGS: [&str; 4] =
    ["tests/fixtures/devset", "tests/fixtures/public", "tests/fixtures/public2", "tests/fixtures/logs"];

fn logs(dir: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    out.sort();
    out
}

/// Every difference between the two readers on `text`, as one line each.
fn differences(name: &str, text: &[u8]) -> Vec<String> {
    let streamed = format!("{:?}", log::scan(text, "x.log", None).unwrap());
    let mut out = Vec::new();
    for &(chunk, batch) in CHUNKINGS {
        let mapped = log::scan_in_chunks(text, "x.log", chunk, batch)
            .expect("no line is long enough to refuse")
            .unwrap();
        if format!("{mapped:?}") != streamed {
            out.push(format!("{name}: chunks of {chunk} in batches of {batch} give another scan"));
        }
    }
    out
}

#[test]
fn mapped_and_streamed_scans_agree_on_every_real_log() {
    let mut failures = Vec::new();
    let mut n = 0;
    for dir in REAL_LOGS {
        for (name, text) in logs(dir) {
            failures.extend(differences(&name, &text));
            n += 1;
        }
    }
    assert!(n >= 200, "only {n} logs");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn mapped_and_streamed_scans_agree_on_every_mutation() {
    let mut failures = Vec::new();
    for (name, text) in logs("tests/fixtures/devset") {
        let text = String::from_utf8_lossy(&text).into_owned();
        // Every fourth hand edit (lower case, doubled spaces, backticks): they change the
        // literals the prefilter looks for; each mutation here costs seconds of the suite.
        for (mutation, mutate) in mutations::MUTATIONS.iter().chain(mutations::HAND_EDITS.iter().step_by(4)) {
            failures.extend(differences(&format!("{name} / {mutation}"), mutate(&text).as_bytes()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn mapped_and_streamed_scans_agree_on_edge_shapes() {
    let cases: &[(&str, &[u8])] = &[
        ("no final newline", b"ok\nRuntimeError: CUDA error: device-side assert triggered"),
        ("only newlines", b"\n\n\n"),
        ("no newline, no literal", b"just some text"),
        ("CRLF and a bare CR", b"a\r\nRuntimeError: x\r\nb\rError: y\r\n"),
        ("NUL padding", b"ok\n\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0RuntimeError: boom\n"),
        ("literal on the first byte", b"Error\n"),
        ("traceback at the end", b"x\nTraceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n    f()\nValueError: bad"),
    ];
    let mut failures = Vec::new();
    for (name, text) in cases {
        failures.extend(differences(name, text));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_mapped_file_with_default_chunks_scans_as_streamed() {
    // Several default chunks and batches: the crash near the end of 70 MB of chatter.
    let chatter =
        "Epoch 3:  45%|####      | 450/1000 [00:12<00:15, 36.1it/s, loss=0.693]\n".repeat(1_000_000);
    let crash = "Traceback (most recent call last):\n  File \"/home/u/train.py\", line 9, in <module>\n    loss.item()\nRuntimeError: CUDA error: device-side assert triggered\n";
    let text = format!("{chatter}{crash}{}", &chatter[..4096]);
    let (_file, map) = mapped(text.as_bytes());
    let streamed = log::scan(text.as_bytes(), "x.log", None).unwrap();
    let mapped = log::scan_mapped(&map, "x.log", None).unwrap().unwrap();
    assert_eq!(format!("{mapped:?}"), format!("{streamed:?}"));
    assert_eq!(mapped.tracebacks.len(), 1);
}

#[test]
fn a_line_that_may_reach_the_piece_size_is_left_to_the_streaming_reader() {
    let mut text = b"Traceback (most recent call last):\n".to_vec();
    text.extend(std::iter::repeat_n(b'x', 1 << 20));
    text.extend_from_slice(b"\nRuntimeError: boom\n");
    let (_file, map) = mapped(&text);
    assert!(log::scan_mapped(&map, "x.log", None).is_none());
}

/// Reaches far smaller than real ones, so that on small logs the windows and the tail
/// cut through the lines of every event: the mapped search must still pass exactly the
/// lines of the plain definition (`prefilter::reference_candidates`).
const REACHES: &[Reach] = &[
    Reach { near: 0, tail: 0 },
    Reach { near: 1, tail: 1 },
    Reach { near: 40, tail: 0 },
    Reach { near: 300, tail: 200 },
    Reach { near: 4096, tail: 2000 },
];

/// (chunk, batch) sizes for the windowed comparisons: boundaries inside lines, windows
/// that cross chunks and batches, and the defaults' shape.
const WINDOW_CHUNKINGS: &[(usize, usize)] = &[(61, 300), (4096, 16384)];

fn windowed_differences(name: &str, text: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    for &reach in REACHES {
        let reference = format!("{:?}", log::scan_reference(text, "x.log", reach).unwrap());
        for &(chunk, batch) in WINDOW_CHUNKINGS {
            let windowed = log::scan_windowed(text, "x.log", chunk, batch, reach)
                .expect("no line is long enough to refuse")
                .unwrap();
            if format!("{windowed:?}") != reference {
                out.push(format!("{name}: {reach:?}, chunks of {chunk} in batches of {batch}: another scan"));
            }
        }
    }
    out
}

#[test]
fn the_windowed_search_passes_the_lines_of_the_plain_definition() {
    let mut failures = Vec::new();
    for dir in REAL_LOGS {
        for (name, text) in logs(dir) {
            failures.extend(windowed_differences(&name, &text));
        }
    }
    for (name, text) in logs("tests/fixtures/devset") {
        let text = String::from_utf8_lossy(&text).into_owned();
        for (mutation, mutate) in mutations::MUTATIONS.iter().step_by(3) {
            failures.extend(windowed_differences(&format!("{name} / {mutation}"), mutate(&text).as_bytes()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_plain_definition_is_what_it_says() {
    // Line 2 holds a trigger far from any seed, line 4 a trigger near one, line 6 a stated
    // size far from everything, line 8 a trigger in the tail.
    let pad = "x".repeat(100);
    let text = format!(
        "{pad}\n  File \"a.py\", line 1, in f\n{pad}\nIn[3] near\nRuntimeError: boom\n{pad}\nnum_classes = 5\n{pad}\nIn[4] at the end\n"
    );
    let lines: Vec<u64> = prefilter::reference_candidates(text.as_bytes(), Reach { near: 20, tail: 20 })
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    assert_eq!(lines, vec![4, 5, 7, 9]);
}

/// Chatter without a single trigger or seed, `bytes` long.
fn chatter(bytes: usize) -> String {
    let line = "Epoch 3:  45%|####      | 450/1000 [00:12<00:15, 36.1it/s, loss=0.693]\n";
    line.repeat(bytes / line.len() + 1)
}

const CRASH: &str = "Traceback (most recent call last):\n  File \"/home/u/train.py\", line 9, in <module>\n    loss.item()\nRuntimeError: CUDA error: device-side assert triggered\n";

/// The mapped scan (default chunks and reach) of `text` in a file, and the streamed one.
fn both_scans(text: &str) -> (log::LogScan, log::LogScan) {
    let (_file, map) = mapped(text.as_bytes());
    let streamed = log::scan(text.as_bytes(), "x.log", None).unwrap();
    let mapped = log::scan_mapped(&map, "x.log", None).unwrap().unwrap();
    (mapped, streamed)
}

#[test]
fn sizes_and_divergence_far_from_the_crash_are_still_read() {
    // Printed at the start, 20 MB before the crash: far outside the tail and any window.
    let text = format!(
        "vocab_size = 103\nnum_classes: 7\nstep 10 | loss nan | grad_norm inf\n{}{CRASH}",
        chatter(20 << 20)
    );
    let (mapped, streamed) = both_scans(&text);
    assert_eq!(format!("{mapped:?}"), format!("{streamed:?}"));
    let sizes: Vec<_> = mapped.sizes.iter().map(|s| (s.key, s.value, s.log_line)).collect();
    assert_eq!(sizes, vec![("vocab_size", 103, 1), ("num_classes", 7, 2)]);
    assert_eq!(mapped.divergence.len(), 1);
    assert_eq!(mapped.divergence[0].log_line, 3);
}

#[test]
fn a_traceback_without_its_header_far_from_the_end_is_read_whole() {
    // The frames hold no seed; the exception line after them does, and its window reaches
    // back over them. Notebook-style frames too.
    let headless = "  File \"/home/u/train.py\", line 9, in <module>\n    loss = crit(out, y)\nCell In[4], line 2\n      1 out = model(x)\n----> 2 loss = crit(out, y)\nIndexError: Target 12 is out of bounds.\n";
    let text = format!("{}{headless}{}{CRASH}", chatter(10 << 20), chatter(10 << 20));
    let (mapped, streamed) = both_scans(&text);
    assert_eq!(format!("{mapped:?}"), format!("{streamed:?}"));
    assert_eq!(mapped.tracebacks.len(), 2);
    assert!(mapped.tracebacks[0].traceback.frames.len() >= 2, "{:?}", mapped.tracebacks[0]);
}

#[test]
fn a_lone_trigger_far_from_any_seed_and_from_the_end_is_not_parsed() {
    // The trade the prefilter makes: a frame-like line alone in 20 MB of chatter, with no
    // error anywhere near it, is a line the streaming reader parses (as a traceback that
    // never ends in an exception) and the mapped one skips. The diagnosis of the crash at
    // the end is the same either way.
    let text = format!(
        "{}  File \"/home/u/train.py\", line 3, in f\n{}{CRASH}",
        chatter(10 << 20),
        chatter(10 << 20)
    );
    let (mapped, streamed) = both_scans(&text);
    assert_eq!(streamed.tracebacks.len(), 2);
    assert_eq!(mapped.tracebacks.len(), 1);
    assert_eq!(format!("{:?}", mapped.tracebacks[0]), format!("{:?}", streamed.tracebacks[1]));
    let report = |scan: log::LogScan| serde_json::to_string(&diagnose::diagnose(&[scan])).unwrap();
    assert_eq!(report(mapped), report(streamed));
}

#[test]
fn follow_on_lines_far_from_the_end_are_read_through_their_error_s_window() {
    // Neither line holds a seed; each is printed beside an error that does.
    let cuda = "RuntimeError: CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n";
    let nccl = "[E1105 09:41:07.295143277 ProcessGroupNCCL.cpp:621] [Rank 1] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.\nterminate called after throwing an instance of 'c10::DistBackendError'\n  what():  [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.\n";
    let text = format!("{}{cuda}{}{nccl}{}{CRASH}", chatter(10 << 20), chatter(10 << 20), chatter(10 << 20));
    let (mapped, streamed) = both_scans(&text);
    assert_eq!(format!("{mapped:?}"), format!("{streamed:?}"));
    let texts: Vec<&str> = mapped.errors.iter().map(|e| e.text.as_str()).collect();
    assert!(texts.iter().any(|t| t.contains("CUDA_LAUNCH_BLOCKING")), "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("Some NCCL operations have failed")), "{texts:?}");
}
