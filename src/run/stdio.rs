//! Where the child's stdout and stderr go: for each, a pseudo-terminal when its
//! destination is a terminal, else a pipe; one pipe for both when they go to the same
//! file (`> log 2>&1`, `2>&1 | tee`), so their order is kept.

use super::output::Sink;
use super::pty;
use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::process::{Command, Stdio};

/// One stream of the child's output and where it goes.
pub struct Stream {
    pub source: File,
    pub sink: Sink,
}

pub struct Plumbing {
    pub streams: Vec<Stream>,
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
        enlarge_pipe(&s.source);
    }
    Ok(Plumbing { streams, pty: pty_kept })
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

/// A larger pipe lets the child write more between two reads (fewer context switches at
/// high output rates); the kernel's limit for unprivileged users is 1 MiB by default.
fn enlarge_pipe(source: &File) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: F_SETPIPE_SZ only changes the pipe's capacity; on a pty it fails harmlessly.
        unsafe {
            libc::fcntl(source.as_fd().as_raw_fd(), libc::F_SETPIPE_SZ, super::output::CHUNK as libc::c_int)
        };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = source;
}
