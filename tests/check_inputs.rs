//! What a careless user hands to `check` besides data: a header wider than any buffer,
//! a byte order mark, a symlink loop, a FIFO, a directory named like a file, a file it may
//! not read, a name that is not UTF-8, a file still being written. Each is read, or refused
//! in one line naming it, exit 2.

mod check_support;

use check_support::*;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

#[test]
fn a_header_of_any_width_is_read() {
    // Before: the header was cut at 1 MiB, and then "no column `label`".
    let dir = tempdir();
    let mut csv: String = (0..100_000).map(|i| format!("feature_{i},")).collect();
    csv.push_str("label\n");
    for row in 0..20 {
        csv.push_str(&"0,".repeat(100_000));
        csv.push_str(&format!("{}\n", row % 12));
    }
    std::fs::write(dir.path().join("wide.csv"), &csv).unwrap();
    let run = check_json(dir.path(), &["wide.csv", "--column", "label", "--num-classes", "10"], 1);
    let d = run.diagnosis("target-out-of-range");
    assert_eq!(d["values"]["bad_count"], 2, "{}", run.stdout);
    // The rows and lines of the findings count the header.
    assert!(d["evidence"].to_string().contains("wide.csv:12"), "{}", run.stdout);
    // A column the wide header lacks is named, with the first columns and how many there are.
    let err =
        check_fails(dir.path(), &["wide.csv", "--column", "lable"], &["no column `lable`", "feature_0"]);
    assert!(err.contains("100001 in all"), "{err}");
}

#[test]
fn a_byte_order_mark_is_not_part_of_the_first_name() {
    let dir = tempdir();
    std::fs::write(dir.path().join("excel.csv"), b"\xef\xbb\xbflabel,x\r\n1,a\r\n12,b\r\n").unwrap();
    let run = check_json(dir.path(), &["excel.csv", "--column", "label", "--num-classes", "10"], 1);
    assert_eq!(run.diagnosis("target-out-of-range")["values"]["bad_count"], 1);
    std::fs::write(dir.path().join("bare.txt"), b"\xef\xbb\xbf3\n4\n").unwrap();
    check_json(dir.path(), &["bare.txt", "--num-classes", "10"], 0);
}

#[test]
fn links_pipes_directories_and_names_that_are_not_files() {
    let dir = tempdir();
    std::os::unix::fs::symlink("loop.csv", dir.path().join("loop.csv")).unwrap();
    let err = check_fails(dir.path(), &["loop.csv"], &["loop.csv"]);
    assert!(err.contains("symbolic links"), "a loop, not a missing file: {err}");
    let fifo = dir.path().join("pipe.csv");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    check_fails(dir.path(), &["pipe.csv"], &["pipe.csv", "not a regular file"]);
    std::fs::create_dir(dir.path().join("shard.parquet")).unwrap();
    check_fails(dir.path(), &["shard.parquet"], &["shard.parquet", "no data file"]);
}

#[test]
fn a_name_that_is_not_utf8_is_read() {
    // Before: clap refused the argument ("invalid UTF-8 was detected"), with usage.
    let dir = tempdir();
    let name = OsStr::from_bytes(b"labels-\xff.csv");
    std::fs::write(dir.path().join(name), "label\n1\n2\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_assertscope"))
        .arg("check")
        .arg(name)
        .args(["--num-classes", "10"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("labels-\u{fffd}.csv"));
}

#[test]
fn a_file_that_may_not_be_read_is_one_line() {
    let dir = tempdir();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let locked = dir.path().join("locked.csv");
    std::fs::write(&locked, "label\n1\n").unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_assertscope"));
    cmd.args(["check", "locked.csv"]).current_dir(dir.path());
    // SAFETY: geteuid has no preconditions. As root, run as nobody, for whom mode 000 bites.
    if unsafe { libc::geteuid() } == 0 {
        use std::os::unix::process::CommandExt;
        cmd.uid(65534).gid(65534);
    }
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("locked.csv") && err.contains("Permission denied"), "{err}");
}

#[test]
fn a_file_growing_while_it_is_read_is_read_up_to_its_length_at_the_start() {
    let dir = tempdir();
    let path = dir.path().join("growing.csv");
    let rows: String = (0..2_000_000).map(|i| format!("{}\n", i % 7)).collect();
    std::fs::write(&path, format!("label\n{rows}")).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (path, stop) = (path.clone(), stop.clone());
        std::thread::spawn(move || {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                f.write_all("12\n".repeat(100_000).as_bytes()).unwrap();
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    let run = assertscope_bounded(
        dir.path(),
        &["check", "growing.csv", "--num-classes", "10", "--no-progress"],
        None,
        Duration::from_secs(600),
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    let run = run.expect("check ends while the file grows");
    assert!(matches!(run.code, 0 | 1), "{}", run.stderr);
}
