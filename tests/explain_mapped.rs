//! The mapped reader (prefilter over chunks in parallel) against the streaming reader:
//! on every development and public log, and on every paste mutation of the development
//! logs, both scans are the same, field for field, whatever the chunk size (tiny chunks
//! put a chunk boundary inside every line and literal).

#[path = "explain_support/mutations.rs"]
mod mutations;

use assertscope::log;
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
    for dir in ["tests/fixtures/devset", "tests/fixtures/public", "tests/fixtures/logs"] {
        for (name, text) in logs(dir) {
            failures.extend(differences(&name, &text));
            n += 1;
        }
    }
    assert!(n >= 118, "only {n} logs");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn mapped_and_streamed_scans_agree_on_every_mutation() {
    let mut failures = Vec::new();
    for (name, text) in logs("tests/fixtures/devset") {
        let text = String::from_utf8_lossy(&text).into_owned();
        for (mutation, mutate) in mutations::MUTATIONS {
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
