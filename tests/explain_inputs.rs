//! `explain` on logs that are damaged, oddly encoded or mixed with what cannot be read:
//! the readable text is diagnosed, as `grep -a` and ripgrep read it, and what cannot be
//! read gets one line on stderr without stopping the rest.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

fn devset(id: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/fixtures/devset/{id}.log", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// Runs `assertscope explain ARGS`; as root, as `nobody`, so that a file with mode 000 is
/// unreadable as it is for any user.
fn explain(args: &[&Path]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_assertscope"));
    cmd.arg("explain").arg("--json").args(args).env("NO_COLOR", "1");
    as_nobody_if_root(&mut cmd);
    cmd.output().unwrap()
}

fn as_nobody_if_root(cmd: &mut Command) {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        cmd.uid(65534).gid(65534);
    }
}

/// A directory every user can read, as `nobody` must.
fn open_tempdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// Bytes as random as a compressed file's (xorshift).
fn noise(len: usize) -> Vec<u8> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

fn cause(out: &Output) -> String {
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", String::from_utf8_lossy(&out.stdout), stderr(out)));
    json["diagnoses"][0]["cause"].as_str().unwrap_or("none").to_string()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    path
}

/// What `grep -a` (every byte read as text) finds in the file: the reference for what a
/// log holds, NULs or not.
fn grep_a_count(pattern: &str, path: &Path) -> usize {
    let out = Command::new("grep").args(["-a", "-c", pattern]).arg(path).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or(0)
}

#[test]
fn a_nul_byte_or_a_binary_stretch_inside_a_log_is_noise() {
    // Fails on the code before: "binary data, not a text log", and in a directory the log
    // was skipped and "no error found" said.
    let dir = open_tempdir();
    let log = devset("023");
    let mut one_nul = log.clone();
    one_nul.insert(100, 0);
    let mut garbage = log[..200].to_vec();
    garbage.extend(noise(3000));
    garbage.extend_from_slice(&log[200..]);
    for (name, bytes) in [("one-nul.log", one_nul), ("garbage.log", garbage)] {
        let path = write(dir.path(), name, &bytes);
        assert!(grep_a_count("device-side assert", &path) > 0, "grep -a reads the error in {name}");
        let out = explain(&[&path]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        assert_eq!(cause(&out), "target-out-of-range", "{name}");
        let sub = dir.path().join(format!("dir-{name}"));
        std::fs::create_dir(&sub).unwrap();
        std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o755)).unwrap();
        write(&sub, "rank0.log", &bytes);
        let out = explain(&[&sub]);
        assert_eq!(out.status.code(), Some(0), "{name} in a directory: {}", stderr(&out));
        assert_eq!(cause(&out), "target-out-of-range", "{name} in a directory");
        assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    }
}

#[test]
fn a_utf16_log_is_read_as_text() {
    // PowerShell's `python train.py > train.log` writes UTF-16 with a byte order mark.
    let dir = open_tempdir();
    let text = String::from_utf8(devset("023")).unwrap().replace('\n', "\r\n");
    let mut bytes = vec![0xff, 0xfe];
    bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    let path = write(dir.path(), "train.log", &bytes);
    let out = explain(&[&path]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(cause(&out), "target-out-of-range");
}

#[test]
fn a_file_wholly_binary_is_refused_in_one_line() {
    let dir = open_tempdir();
    let noise = noise(20_000);
    let path = write(dir.path(), "dump.log", &noise);
    let out = explain(&[&path]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("dump.log") && err.contains("not a text log"), "{err}");
}

#[test]
fn an_unreadable_file_is_reported_and_the_others_diagnosed_as_ripgrep_does() {
    // Fails on the code before: exit 2 at the first unreadable file, no diagnosis.
    let dir = open_tempdir();
    let good = write(dir.path(), "rank0.log", &devset("023"));
    let locked = write(dir.path(), "rank1.log", b"Traceback (most recent call last):\n");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let missing = dir.path().join("rank2.log");
    for args in
        [vec![dir.path()], vec![locked.as_path(), good.as_path()], vec![missing.as_path(), good.as_path()]]
    {
        let out = explain(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: an unreadable input makes the status 2\n{err}");
        assert_eq!(cause(&out), "target-out-of-range", "{args:?}: the readable log is diagnosed");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("rank1.log") || err.contains("rank2.log"), "{err}");
    }
    // ripgrep, where it is installed, reports the same file and exits 2 with a match found.
    let mut rg = Command::new("rg");
    rg.args(["-c", "device-side assert"]).arg(dir.path());
    as_nobody_if_root(&mut rg);
    if let Ok(out) = rg.output() {
        assert_eq!(out.status.code(), Some(2), "rg: {}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stdout).contains("rank0.log"));
    }
}

#[test]
fn only_unreadable_inputs_give_no_report() {
    let dir = open_tempdir();
    let locked = write(dir.path(), "a.log", b"x\n");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let out = explain(&[&locked, &dir.path().join("b.log")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(stderr(&out).lines().count(), 2, "{}", stderr(&out));
}

#[test]
fn symlink_loops_fifos_and_directories_named_like_logs() {
    let dir = open_tempdir();
    write(dir.path(), "rank0.log", &devset("023"));
    std::os::unix::fs::symlink("loop.log", dir.path().join("loop.log")).unwrap();
    let fifo = dir.path().join("pipe.log");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let named_like_a_log = dir.path().join("rank1.log");
    std::fs::create_dir(&named_like_a_log).unwrap();
    std::fs::set_permissions(&named_like_a_log, std::fs::Permissions::from_mode(0o755)).unwrap();
    write(&named_like_a_log, "stderr.log", b"step 1 ok\n");
    // In a directory, a symlink and a FIFO are passed over (as ripgrep does without -L),
    // and a directory is walked, whatever its name.
    let out = explain(&[dir.path()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(cause(&out), "target-out-of-range");
    // Named, the loop is one line and the rest still diagnosed.
    let out = explain(&[&dir.path().join("loop.log"), &dir.path().join("rank0.log")]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(cause(&out), "target-out-of-range");
    let err = stderr(&out);
    assert!(err.contains("loop.log") && err.lines().count() == 1, "{err}");
}

#[test]
fn a_device_is_refused_rather_than_read_forever() {
    // Before: /dev/zero was read for ever, as "text" of NULs.
    let dir = open_tempdir();
    let good = write(dir.path(), "rank0.log", &devset("023"));
    let out = explain(&[Path::new("/dev/zero"), &good]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(cause(&out), "target-out-of-range");
    let err = stderr(&out);
    assert!(err.contains("/dev/zero: a device") && err.lines().count() == 1, "{err}");
}
