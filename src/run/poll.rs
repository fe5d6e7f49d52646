//! Waiting on descriptors: our ends made non-blocking, `poll(2)` on one or two of them,
//! and the signal that wakes every waiter once `run` stops waiting for the output.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Set once `run` no longer waits for the output (every writer closed it, or the job was
/// told to end and the processes it left took too long), and wakes every pump waiting.
pub struct EndSignal {
    ended: AtomicBool,
    wake_read: std::io::PipeReader,
    wake_write: std::io::PipeWriter,
}

impl EndSignal {
    pub fn new() -> io::Result<Arc<EndSignal>> {
        let (wake_read, wake_write) = io::pipe()?;
        Ok(Arc::new(EndSignal { ended: AtomicBool::new(false), wake_read, wake_write }))
    }

    pub fn set(&self) {
        self.ended.store(true, Ordering::Release);
        // Never read: the pipe stays readable, so every poll on it returns at once.
        let _ = (&self.wake_write).write(b"x");
    }

    pub(super) fn is_set(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }

    /// Readable once set.
    pub(super) fn wake_fd(&self) -> BorrowedFd<'_> {
        self.wake_read.as_fd()
    }
}

pub(super) fn set_nonblocking(file: &File) {
    let fd = file.as_raw_fd();
    // SAFETY: F_GETFL/F_SETFL on a descriptor we own; only O_NONBLOCK is added, on our
    // own end of the pipe or pty (the child's end is a different open file).
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
}

/// Waits until `source` has data or the child has ended.
pub(super) fn wait_readable(source: BorrowedFd<'_>, wake: BorrowedFd<'_>) {
    let mut fds = [
        libc::pollfd { fd: source.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        libc::pollfd { fd: wake.as_raw_fd(), events: libc::POLLIN, revents: 0 },
    ];
    // SAFETY: two valid pollfds.
    unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
}

pub(super) fn wait_for(fd: BorrowedFd<'_>, events: libc::c_short, timeout_ms: libc::c_int) {
    let mut pfd = libc::pollfd { fd: fd.as_raw_fd(), events, revents: 0 };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
}
