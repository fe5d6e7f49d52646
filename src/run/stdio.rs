//! Where the child's stdout and stderr go: for each, a pseudo-terminal when its
//! destination is a terminal; the file itself when it is a regular file (the child
//! writes there as it would without `run`, and the scanner follows the file); else a
//! pipe, one for both when they go to the same place (`2>&1 | tee`), so their order is
//! kept.

use super::pty;
use super::sink::Sink;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::process::{Command, Stdio};

/// One stream of the child's output and where it goes.
pub struct Stream {
    pub source: File,
    pub sink: Sink,
}

/// A regular file the child writes to itself, and where its output in it starts.
pub struct FollowedFile {
    /// The same file, opened again for reading.
    pub file: File,
    pub from: u64,
}

pub struct Plumbing {
    pub streams: Vec<Stream>,
    pub files: Vec<FollowedFile>,
    /// Kept to pass terminal resizes on.
    pub pty: Option<(File, Sink)>,
}

/// Connects the child's stdout (going to `out_sink`) and stderr (going to stderr).
pub fn attach(cmd: &mut Command, out_sink: Sink, allow_pty: bool) -> anyhow::Result<Plumbing> {
    let err_sink = Sink::Stderr;
    let out_tty = allow_pty && out_sink.is_terminal();
    let err_tty = allow_pty && err_sink.is_terminal();
    let mut streams = Vec::new();
    let mut pty_kept = None;

    let (mut out_end, mut err_end): (Option<OwnedFd>, Option<OwnedFd>) = (None, None);
    if out_tty || err_tty {
        let sink = if out_tty { out_sink } else { err_sink };
        let pty = pty::open(sink.fd())?;
        if out_tty {
            out_end = Some(pty.slave.try_clone()?);
        }
        if err_tty {
            err_end = Some(pty.slave.try_clone()?);
        }
        pty_kept = Some((pty.master.try_clone()?, sink));
        streams.push(Stream { source: pty.master, sink });
    }
    let mut files: Vec<(FollowedFile, (u64, u64))> = Vec::new();
    for (end, sink) in [(&mut out_end, out_sink), (&mut err_end, err_sink)] {
        if end.is_some() {
            continue;
        }
        if let Some((followed, id)) = follow(sink) {
            *end = Some(sink.fd().try_clone_to_owned()?);
            if !files.iter().any(|(_, seen)| *seen == id) {
                files.push((followed, id));
            }
        }
    }
    match (out_end.is_none(), err_end.is_none()) {
        (true, true) if same_file(out_sink, err_sink) => {
            let (reader, writer) = std::io::pipe()?;
            err_end = Some(OwnedFd::from(writer.try_clone()?));
            out_end = Some(OwnedFd::from(writer));
            streams.push(Stream { source: File::from(OwnedFd::from(reader)), sink: out_sink });
        }
        (out_missing, err_missing) => {
            for (missing, end, sink) in
                [(out_missing, &mut out_end, out_sink), (err_missing, &mut err_end, err_sink)]
            {
                if missing {
                    let (reader, writer) = std::io::pipe()?;
                    *end = Some(OwnedFd::from(writer));
                    streams.push(Stream { source: File::from(OwnedFd::from(reader)), sink });
                }
            }
        }
    }
    cmd.stdout(Stdio::from(out_end.expect("stdout is connected")));
    cmd.stderr(Stdio::from(err_end.expect("stderr is connected")));
    for s in &streams {
        enlarge_pipe(s.source.as_fd());
        enlarge_pipe(s.sink.fd());
    }
    let files = files.into_iter().map(|(f, _)| f).collect();
    Ok(Plumbing { streams, files, pty: pty_kept })
}

/// When `sink` is a regular file we can read: the file opened again for reading, where
/// the child's output will start (the end, for a file opened for appending), and the
/// file's identity. A pipe in between could only ever give the child a broken pipe where
/// the file would have given it the real error (a full disk), and would cost a copy.
fn follow(sink: Sink) -> Option<(FollowedFile, (u64, u64))> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        let fd = sink.fd().as_raw_fd();
        let meta = File::from(sink.fd().try_clone_to_owned().ok()?).metadata().ok()?;
        if !meta.file_type().is_file() {
            return None;
        }
        // Opened through /proc (not by name): the very file the descriptor points at,
        // even if it was renamed or removed since.
        let file = File::options()
            .read(true)
            .custom_flags(libc::O_CLOEXEC | libc::O_NOCTTY)
            .open(format!("/proc/self/fd/{fd}"))
            .ok()?;
        // SAFETY: F_GETFL and lseek on fd 1 or 2 only read its state.
        let (flags, position) =
            unsafe { (libc::fcntl(fd, libc::F_GETFL), libc::lseek(fd, 0, libc::SEEK_CUR)) };
        let from =
            if flags >= 0 && flags & libc::O_APPEND != 0 { meta.len() } else { position.max(0) as u64 };
        Some((FollowedFile { file, from }, (meta.dev(), meta.ino())))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = sink;
        None
    }
}

/// Whether two sinks are the same open file (or the same pipe).
fn same_file(a: Sink, b: Sink) -> bool {
    if a == b {
        return true;
    }
    let stat =
        |s: Sink| File::from(s.fd().try_clone_to_owned().ok()?).metadata().ok().map(|m| (m.dev(), m.ino()));
    matches!((stat(a), stat(b)), (Some(x), Some(y)) if x == y)
}

/// Grows a pipe to [`super::sink::CHUNK`], never shrinking it. Both pipes are grown:
/// the child's, so that it writes more between two reads, and the one to the reader of
/// our output (`| cat`), so that each of the reader's wake-ups takes a whole chunk rather
/// than the default 64 KiB. Without `run` the job writes to that pipe itself; through
/// `run`, every fill of it costs a wake-up of `run` as well (`bench/run/throughput.py` on
/// 2 busy cores, load 6 to 11: 1 GiB piped to `cat` went from about 0.6x plain to 0.8x).
/// A larger capacity changes nothing else about the pipe. The kernel's limit for
/// unprivileged users is 1 MiB by default; a refusal leaves the pipe as it was.
fn enlarge_pipe(pipe: BorrowedFd<'_>) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let fd = pipe.as_raw_fd();
        // SAFETY: F_GETPIPE_SZ/F_SETPIPE_SZ only read and change a pipe's capacity; on
        // anything else (a pty, a socket) they fail harmlessly.
        unsafe {
            let size = libc::fcntl(fd, libc::F_GETPIPE_SZ);
            if size > 0 && (size as usize) < super::sink::CHUNK {
                libc::fcntl(fd, libc::F_SETPIPE_SZ, super::sink::CHUNK as libc::c_int);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = pipe;
}
