//! The child's output: passed through live to the user's terminal or file, and at the
//! same time given to the log scanner (see `feed`), which never slows it down.

use super::feed::FeedWriter;
use super::poll::{set_nonblocking, wait_readable, EndSignal};
use super::sink::{pass_piece, PumpEnd, Sink, CHUNK};
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsFd;
use std::sync::Arc;
use std::thread::JoinHandle;

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
