//! The log scanner's copy of the output. Passing the output on never waits for the
//! scanner: each stream reaches it through a pipe of its own, and when the scanner has
//! fallen a whole pipe behind, the *oldest* unscanned bytes in that pipe are dropped to
//! make room, never the newest. So the scanner sees everything while it keeps up, and
//! whatever the load, the last pipeful of each stream ([`PIPE_BYTES`], or its last 256
//! writes if they were tiny) is scanned: the final part, where a crash is. Where bytes
//! were dropped the scanner sees a line break, so no line is glued to a stranger.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, Mutex};

/// The size asked for each pipe to the scanner (the unprivileged maximum by default).
pub const PIPE_BYTES: usize = 1 << 20;
/// How much the scanner takes at once; small enough that the writer, which waits for a
/// read in progress before dropping, never waits long.
const READ_BYTES: usize = 256 << 10;
/// How much is dropped at once when the scanner is a pipe behind.
const DROP_BYTES: usize = PIPE_BYTES / 4;
/// A line this long without a newline (a progress bar) is handed on as it is.
const LONGEST_HELD_LINE: usize = 1 << 20;

struct Shared {
    /// The scanner's end: read by the scanner, emptied of its oldest bytes by the writer.
    read: File,
    /// Bytes dropped since the scanner last read. Every read and every drop holds this
    /// lock, so the scanner knows exactly where its input has a hole.
    dropped: Mutex<u64>,
}

/// The writer's end of one stream's copy for the scanner.
pub struct FeedWriter {
    write: File,
    shared: Arc<Shared>,
    /// Where dropped bytes go (spliced there, never copied).
    null: File,
}

/// The scanner's end of one stream's copy.
pub struct FeedReader {
    shared: Arc<Shared>,
    /// The start of a line whose end has not arrived yet.
    partial: Vec<u8>,
    open: bool,
}

/// A pipe from a pump to the scanner.
pub fn feed() -> io::Result<(FeedWriter, FeedReader)> {
    let (read, write) = io::pipe()?;
    let read = File::from(OwnedFd::from(read));
    let write = File::from(OwnedFd::from(write));
    super::output::set_nonblocking(&read);
    super::output::set_nonblocking(&write);
    #[cfg(target_os = "linux")]
    // SAFETY: F_SETPIPE_SZ only changes the capacity of our own pipe; a refusal (a
    // lowered limit) leaves the default 64 KiB, which only means dropping sooner.
    unsafe {
        libc::fcntl(write.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_BYTES as libc::c_int);
    }
    let shared = Arc::new(Shared { read, dropped: Mutex::new(0) });
    let null = File::options().write(true).open("/dev/null")?;
    Ok((
        FeedWriter { write, shared: shared.clone(), null },
        FeedReader { shared, partial: Vec::new(), open: true },
    ))
}

impl FeedWriter {
    /// The pipe's write end, for `tee(2)`.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.write.as_fd()
    }

    /// Gives the scanner a copy of `bytes`, dropping its oldest unscanned bytes for room.
    pub fn copy(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            match (&self.write).write(bytes) {
                Ok(n) => bytes = &bytes[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.make_room(),
                // The scanner is gone (it failed): the output itself still goes on.
                Err(_) => return,
            }
        }
    }

    /// Drops the oldest unscanned bytes: the scanner is a whole pipe behind.
    pub fn make_room(&mut self) {
        let mut dropped = match self.shared.dropped.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        let n = discard(&self.shared.read, &self.null, DROP_BYTES);
        *dropped += n as u64;
    }
}

/// Removes up to `len` bytes from the front of a pipe without copying them.
fn discard(pipe: &File, null: &File, len: usize) -> usize {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: splice between two descriptors we own; no user memory is involved.
        let n = unsafe {
            libc::splice(
                pipe.as_raw_fd(),
                std::ptr::null_mut(),
                null.as_raw_fd(),
                std::ptr::null_mut(),
                len,
                libc::SPLICE_F_NONBLOCK,
            )
        };
        if n >= 0 {
            return n as usize;
        }
    }
    let _ = null;
    let mut scratch = vec![0u8; len];
    (&*pipe).read(&mut scratch).unwrap_or(0)
}

impl FeedReader {
    /// Reads what the pipe holds, appending the whole lines to `ready`.
    fn pull(&mut self, ready: &mut Vec<u8>) {
        let mut start = self.partial.len();
        let read = {
            let mut dropped = match self.shared.dropped.lock() {
                Ok(guard) => guard,
                Err(poisoned) => poisoned.into_inner(),
            };
            if *dropped > 0 {
                *dropped = 0;
                // The line in progress lost its end: it ends here.
                if start > 0 {
                    ready.append(&mut self.partial);
                    ready.push(b'\n');
                    start = 0;
                }
            }
            self.partial.resize(start + READ_BYTES, 0);
            (&self.shared.read).read(&mut self.partial[start..])
        };
        match read {
            Ok(0) => {
                self.partial.truncate(start);
                self.open = false;
                if !self.partial.is_empty() {
                    self.partial.push(b'\n');
                    ready.append(&mut self.partial);
                }
                return;
            }
            Ok(n) => self.partial.truncate(start + n),
            // Nothing there after all (the writer dropped it meanwhile), or an error
            // that the next poll reports again.
            Err(e) => {
                self.partial.truncate(start);
                if !matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) {
                    self.open = false;
                }
                return;
            }
        }
        let cut = match memchr::memrchr(b'\n', &self.partial[start..]) {
            Some(i) => start + i + 1,
            None if self.partial.len() >= LONGEST_HELD_LINE => self.partial.len(),
            None => return,
        };
        if ready.is_empty() {
            // Hand the buffer itself over; only the unfinished line is copied.
            let rest = self.partial[cut..].to_vec();
            self.partial.truncate(cut);
            std::mem::swap(ready, &mut self.partial);
            self.partial = rest;
        } else {
            ready.extend_from_slice(&self.partial[..cut]);
            self.partial.drain(..cut);
        }
    }
}

/// Every stream's copy, read as one stream of whole lines.
pub struct ScanInput {
    feeds: Vec<FeedReader>,
    ready: Vec<u8>,
    pos: usize,
}

impl ScanInput {
    pub fn new(feeds: Vec<FeedReader>) -> ScanInput {
        ScanInput { feeds, ready: Vec::new(), pos: 0 }
    }

    /// Waits until some stream has something (or has ended) and takes it.
    fn refill(&mut self) {
        self.ready.clear();
        self.pos = 0;
        let mut fds: Vec<libc::pollfd> = self
            .feeds
            .iter()
            .filter(|f| f.open)
            .map(|f| libc::pollfd { fd: f.shared.read.as_raw_fd(), events: libc::POLLIN, revents: 0 })
            .collect();
        // SAFETY: a valid array of pollfds of the given length.
        let polled = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if polled < 0 {
            return;
        }
        let mut ready = std::mem::take(&mut self.ready);
        for feed in self.feeds.iter_mut().filter(|f| f.open) {
            let fd = feed.shared.read.as_raw_fd();
            if fds.iter().any(|p| p.fd == fd && p.revents != 0) {
                feed.pull(&mut ready);
            }
        }
        self.ready = ready;
    }
}

impl Read for ScanInput {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos >= self.ready.len() {
            if self.feeds.iter().all(|f| !f.open) {
                return Ok(0);
            }
            self.refill();
        }
        let n = out.len().min(self.ready.len() - self.pos);
        out[..n].copy_from_slice(&self.ready[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scanned(feeds: Vec<FeedReader>) -> String {
        let mut s = String::new();
        ScanInput::new(feeds).read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn a_stream_arrives_whole_and_an_unfinished_last_line_is_ended() {
        let (mut w, r) = feed().unwrap();
        w.copy(b"ab\ncd\nno newline");
        drop(w);
        assert_eq!(scanned(vec![r]), "ab\ncd\nno newline\n");
    }

    #[test]
    fn lines_of_two_streams_are_never_mixed() {
        let (mut out, out_r) = feed().unwrap();
        let (mut err, err_r) = feed().unwrap();
        out.copy(b"stdout one\nstdout ");
        err.copy(b"stderr one\nstderr ");
        out.copy(b"two\n");
        err.copy(b"two\n");
        drop((out, err));
        let got = scanned(vec![out_r, err_r]);
        let mut lines: Vec<&str> = got.lines().collect();
        lines.sort();
        assert_eq!(lines, ["stderr one", "stderr two", "stdout one", "stdout two"]);
    }

    #[test]
    fn a_scanner_that_falls_behind_loses_the_oldest_output_never_the_last() {
        let (mut w, r) = feed().unwrap();
        // Nothing reads while the writer gives 8 pipefuls: it must never block.
        let line = b"[rank0]: step 1 | loss 0.48 | lr 3e-4 | 812 samples/s\n";
        let mut written = 0;
        while written < 8 * PIPE_BYTES {
            w.copy(line);
            written += line.len();
        }
        w.copy(b"RuntimeError: CUDA error: device-side assert triggered\n");
        drop(w);
        let got = scanned(vec![r]);
        assert!(got.len() < written, "scanned {} of {written}", got.len());
        assert!(got.ends_with("\nRuntimeError: CUDA error: device-side assert triggered\n"));
        // Around a hole are the two ends of cut lines, each a line of its own; no line
        // is glued to a stranger.
        let whole = std::str::from_utf8(line).unwrap().trim_end();
        for l in got.lines() {
            assert!(whole.contains(l) || l.starts_with("RuntimeError"), "{l:?}");
        }
    }
}
