//! `check` on inputs that would take all the memory or never end, and on a CSV whose
//! unclosed quote hides the rest of the file: one line naming the file and the place,
//! exit status 2, bounded memory, never a panic.

mod check_support;

use check_support::*;
use std::io::Write;

#[test]
fn an_unclosed_quote_that_swallows_the_rest_of_the_file_names_its_line() {
    let dir = tempdir();
    let mut csv = String::from("label,text\n1,\"hello\"\n2,\"unclosed\n");
    for _ in 0..1000 {
        csv.push_str("9,bad label hidden in the quote\n");
    }
    std::fs::write(dir.path().join("a.csv"), csv).unwrap();
    check_fails(
        dir.path(),
        &["a.csv", "--column", "label", "--num-classes", "3"],
        &["a.csv:3", "quote opened on line 3", "row 1", "never closed"],
    );
}

#[test]
fn quotes_that_close_are_still_read() {
    let dir = tempdir();
    std::fs::write(
        dir.path().join("a.csv"),
        "label,text\n1,\"a \"\"quoted\"\" word\"\n2,\"two\nlines\"\n0,b\n",
    )
    .unwrap();
    let run = assertscope(dir.path(), &["check", "a.csv", "--column", "label", "--num-classes", "3"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("3 rows"), "{}", run.stdout);
}

fn write_long_line(path: &std::path::Path, head: &[u8], quoted: bool) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    f.write_all(head).unwrap();
    if quoted {
        f.write_all(b"1,\"x\"\n1,").unwrap();
    }
    let block = vec![b'7'; 1 << 20];
    for _ in 0..80 {
        f.write_all(&block).unwrap();
    }
    f.write_all(b"\n").unwrap();
}

#[test]
fn a_line_too_long_for_a_label_file_is_refused_with_its_place() {
    let dir = tempdir();
    write_long_line(&dir.path().join("plain.csv"), b"label\n1\n", false);
    check_fails(
        dir.path(),
        &["plain.csv", "--num-classes", "3"],
        &["plain.csv", "byte 8", "longer than 64 MiB"],
    );
    write_long_line(&dir.path().join("quoted.csv"), b"label,t\n", true);
    check_fails(
        dir.path(),
        &["quoted.csv", "--column", "label", "--num-classes", "3"],
        &["quoted.csv:3", "line 3", "64 MiB"],
    );
    write_long_line(&dir.path().join("a.jsonl"), b"{\"label\": 1}\n", false);
    check_fails(
        dir.path(),
        &["a.jsonl", "--column", "label", "--num-classes", "3"],
        &["a.jsonl", "byte 13", "64 MiB"],
    );
}

#[test]
#[cfg(unix)] // /dev/zero and mkfifo
fn devices_and_fifos_are_refused_not_read_forever() {
    let dir = tempdir();
    check_fails(
        dir.path(),
        &["/dev/zero", "--format", "csv", "--num-classes", "3"],
        &["/dev/zero", "not a regular file"],
    );
    let fifo = dir.path().join("labels.fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo only reads the NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    check_fails(
        dir.path(),
        &["labels.fifo", "--format", "csv", "--num-classes", "3"],
        &["labels.fifo", "not a regular file"],
    );
}
