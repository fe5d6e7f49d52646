//! Where the child's output goes (fd 1 or 2), and how passing it on ended.

use super::feed::FeedWriter;
use super::poll::wait_for;
use std::fs::File;
use std::io::{self, Write};
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd};

/// How much is read at once (and the pipe size asked for): large reads keep up with a
/// job that logs hundreds of MB/s.
pub const CHUNK: usize = 1 << 20;

/// Where the child's output goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    Stdout,
    Stderr,
}

impl Sink {
    pub fn fd(self) -> BorrowedFd<'static> {
        let fd = match self {
            Sink::Stdout => libc::STDOUT_FILENO,
            Sink::Stderr => libc::STDERR_FILENO,
        };
        // SAFETY: fds 1 and 2 stay open for the life of the process.
        unsafe { BorrowedFd::borrow_raw(fd) }
    }

    pub fn is_terminal(self) -> bool {
        use std::io::IsTerminal;
        self.fd().is_terminal()
    }

    pub fn name(self) -> &'static str {
        match self {
            Sink::Stdout => "stdout",
            Sink::Stderr => "stderr",
        }
    }

    /// Writes straight to the file descriptor: no second buffer, no line buffering (the
    /// child already chose how to buffer), and a descriptor the user's shell left
    /// non-blocking is waited on rather than failed.
    pub(super) fn write_all(self, mut bytes: &[u8]) -> io::Result<()> {
        let fd = self.fd();
        // SAFETY: the File only borrows fd 1 or 2 and is never dropped, so never closes it.
        let mut file = ManuallyDrop::new(unsafe { File::from_raw_fd(fd.as_raw_fd()) });
        while !bytes.is_empty() {
            match file.write(bytes) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => bytes = &bytes[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => wait_for(fd, libc::POLLOUT, -1),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// How a stream of output ended.
#[derive(Debug)]
pub enum PumpEnd {
    /// The child (and whatever shared its output) closed it, or the child ended and what
    /// it had written was passed on.
    Drained,
    /// The reader of our output went away (`| head`): the child's side is closed too, so
    /// the child sees the broken pipe it would have seen without `run`.
    SinkClosed,
    /// Writing the output failed (a full disk): the child's side is closed and the error
    /// is reported.
    WriteFailed(Sink, io::Error),
}

impl PumpEnd {
    pub(super) fn from_write_error(sink: Sink, e: io::Error) -> PumpEnd {
        if e.kind() == io::ErrorKind::BrokenPipe {
            PumpEnd::SinkClosed
        } else {
            PumpEnd::WriteFailed(sink, e)
        }
    }
}

/// Passes on bytes read from the child: to the destination first, then a copy for the
/// scanner (which never holds the output back).
pub(super) fn pass_piece(bytes: &[u8], sink: Sink, feed: &mut FeedWriter) -> Result<(), PumpEnd> {
    sink.write_all(bytes).map_err(|e| PumpEnd::from_write_error(sink, e))?;
    feed.copy(bytes);
    Ok(())
}
