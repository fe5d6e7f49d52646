//! The child's output: passed through live to the user's terminal or file, and at the
//! same time given to the log scanner (see `feed`), which never slows it down.

use super::feed::FeedWriter;
use std::fs::File;
use std::io::{self, Read, Write};
use std::mem::ManuallyDrop;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

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

impl PumpEnd {
    pub(super) fn from_write_error(sink: Sink, e: io::Error) -> PumpEnd {
        if e.kind() == io::ErrorKind::BrokenPipe {
            PumpEnd::SinkClosed
        } else {
            PumpEnd::WriteFailed(sink, e)
        }
    }
}

/// Passes `source` on to `sink` as it arrives, and gives `feed` (the scanner) a copy,
/// until every process holding the other end has closed it, as the reader of a pipeline
/// would: a job's background processes write on after the job's own process has ended.
/// Once `run` stops waiting (`give_up`), what is already buffered is passed on and the
/// pump stops. Its end wakes the supervisor.
pub fn pump(source: File, sink: Sink, feed: FeedWriter, give_up: Arc<EndSignal>) -> JoinHandle<PumpEnd> {
    let child_ended = give_up;
    std::thread::spawn(move || {
        set_nonblocking(&source);
        let mut feed = feed;
        #[cfg(target_os = "linux")]
        let end = match super::zero_copy::pass_on(&source, sink, &mut feed, &child_ended) {
            super::zero_copy::Passed::Ended(end) => end,
            super::zero_copy::Passed::Unsupported => copy(&source, sink, &mut feed, &child_ended),
        };
        #[cfg(not(target_os = "linux"))]
        let end = copy(&source, sink, &mut feed, &child_ended);
        // Closing our end now (not when the thread's caller gets to it) is what gives the
        // child its broken pipe.
        drop(source);
        super::signals::wake();
        end
    })
}

/// Passes `source` on by reading and writing: for a pty, or a destination that cannot be
/// spliced to. Small pieces are gathered for a moment first (see [`GATHER`]).
fn copy(mut source: &File, sink: Sink, feed: &mut FeedWriter, child_ended: &EndSignal) -> PumpEnd {
    let mut buf = vec![0u8; CHUNK];
    loop {
        // Read after looking at the flag: a read that finds nothing once the child had
        // ended means everything it wrote has been passed on.
        let ended = child_ended.is_set();
        let n = match source.read(&mut buf) {
            Ok(0) => return PumpEnd::Drained,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if ended {
                    return PumpEnd::Drained;
                }
                wait_readable(source.as_fd(), child_ended.wake_fd());
                continue;
            }
            // A pty reports EIO once every writer has closed its side.
            Err(_) => return PumpEnd::Drained,
        };
        if let Err(end) = pass_piece(&buf[..n], sink, feed) {
            return end;
        }
        if n < SMALL_READ {
            // A job writing many small pieces (a progress bar's updates) would otherwise
            // cost a wake-up of `run` and a write to the terminal per piece, competing
            // with the job for the CPU; a moment's wait lets them gather into one. What
            // arrives after a pause is still passed on at once.
            std::thread::sleep(GATHER);
        }
    }
}

/// A read smaller than this is followed by [`GATHER`].
const SMALL_READ: usize = 1024;
/// How long small pieces are let gather: less than a terminal's frame, more than the
/// time a job takes to write a few hundred updates (`bench/run/progress.py`).
const GATHER: std::time::Duration = std::time::Duration::from_millis(1);

/// Passes on bytes read from the child: to the destination first, then a copy for the
/// scanner (which never holds the output back).
pub(super) fn pass_piece(bytes: &[u8], sink: Sink, feed: &mut FeedWriter) -> Result<(), PumpEnd> {
    sink.write_all(bytes).map_err(|e| PumpEnd::from_write_error(sink, e))?;
    feed.copy(bytes);
    Ok(())
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

/// The last bytes of a stream, kept while it is read (for `run --report-dir`).
pub struct Tail {
    buf: std::collections::VecDeque<u8>,
    cap: usize,
}

impl Tail {
    pub fn new(cap: usize) -> Tail {
        Tail { buf: std::collections::VecDeque::new(), cap }
    }

    fn push(&mut self, bytes: &[u8]) {
        let bytes = &bytes[bytes.len().saturating_sub(self.cap)..];
        let overflow = (self.buf.len() + bytes.len()).saturating_sub(self.cap);
        self.buf.drain(..overflow);
        self.buf.extend(bytes);
    }

    /// The kept bytes, starting at a line boundary when the start was cut.
    pub fn contents(&self) -> Vec<u8> {
        let (a, b) = self.buf.as_slices();
        let mut v = [a, b].concat();
        if self.buf.len() == self.cap {
            if let Some(i) = memchr::memchr(b'\n', &v) {
                v.drain(..=i);
            }
        }
        v
    }
}

/// A reader that keeps the tail of what passes through it.
pub struct TeeTail<R> {
    inner: R,
    tail: std::sync::Arc<std::sync::Mutex<Tail>>,
}

impl<R> TeeTail<R> {
    pub fn new(inner: R, tail: std::sync::Arc<std::sync::Mutex<Tail>>) -> Self {
        TeeTail { inner, tail }
    }
}

impl<R: Read> Read for TeeTail<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(out)?;
        if let Ok(mut t) = self.tail.lock() {
            t.push(&out[..n]);
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn tail_keeps_the_last_whole_lines() {
        let mut t = Tail::new(10);
        t.push(b"first line\nsecond\n");
        t.push(b"end\n");
        assert_eq!(t.contents(), b"end\n");
        let mut small = Tail::new(100);
        small.push(b"a\nb\n");
        assert_eq!(small.contents(), b"a\nb\n");
    }

    use super::*;
}
