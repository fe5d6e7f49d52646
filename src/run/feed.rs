//! The log scanner's copy of the output. Passing the output on never waits for the
//! scanner to scan: each stream reaches it through a pipe of its own, and when the
//! scanner has fallen a whole pipe behind, the *oldest* unscanned quarter of that pipe is
//! dropped to make room, never the newest. So the scanner sees everything while it keeps
//! up, and whatever the load, the last three quarters of a pipeful of each stream (768 KiB
//! of [`PIPE_BYTES`]; somewhat less when it arrived in teed pieces, each of which takes a
//! page of the pipe however few bytes it holds, which is why small pieces are copied
//! instead, see `zero_copy`) is scanned: the final part, where a crash is. Where bytes
//! were dropped the scanner sees a line break, so no line is glued to a stranger. Output
//! to a regular file is not piped at all: the scanner follows the file
//! (`file_feed::FileFeed`), and `scan_input::ScanInput` reads every stream's copy as one.

use super::poll::{set_nonblocking, wait_for};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
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
    /// Copied bytes with no line break yet (a progress bar's `\r` updates): the scanner
    /// takes whole lines only, so they wait for one, up to [`HELD_BYTES`], rather than
    /// wake the scanner once per update.
    held: Vec<u8>,
}

/// The most bytes held back from the scanner while no line break arrives.
const HELD_BYTES: usize = 64 << 10;

/// The scanner's end of one stream's copy.
pub struct FeedReader {
    shared: Arc<Shared>,
    /// The start of a line whose end has not arrived yet.
    partial: Vec<u8>,
    read_buf: Box<[u8]>,
    pub(super) open: bool,
}

/// Where each read lands before its bytes join the partial line: zeroed once, so that a
/// read costs a copy of what arrived, not a fill of the whole [`READ_BYTES`] as growing the
/// line buffer with `Vec::resize` did. (In release builds that fill could even run byte by
/// byte: rustc may link a copy of `resize`'s generic code from an unoptimised dependency.)
pub(super) fn read_buffer() -> Box<[u8]> {
    vec![0u8; READ_BYTES].into_boxed_slice()
}

/// A pipe from a pump to the scanner.
pub fn feed() -> io::Result<(FeedWriter, FeedReader)> {
    let (read, write) = io::pipe()?;
    let read = File::from(OwnedFd::from(read));
    let write = File::from(OwnedFd::from(write));
    set_nonblocking(&read);
    set_nonblocking(&write);
    #[cfg(target_os = "linux")]
    // SAFETY: F_SETPIPE_SZ only changes the capacity of our own pipe; a refusal (a
    // lowered limit) leaves the default 64 KiB, which only means dropping sooner.
    unsafe {
        libc::fcntl(write.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_BYTES as libc::c_int);
    }
    let shared = Arc::new(Shared { read, dropped: Mutex::new(0) });
    let null = File::options().write(true).open("/dev/null")?;
    Ok((
        FeedWriter { write, shared: shared.clone(), null, held: Vec::new() },
        FeedReader { shared, partial: Vec::new(), read_buf: read_buffer(), open: true },
    ))
}

impl FeedWriter {
    /// The pipe's write end, for `tee(2)`: what is held goes first.
    #[cfg(target_os = "linux")]
    pub fn fd(&mut self) -> std::os::fd::BorrowedFd<'_> {
        self.flush();
        self.write.as_fd()
    }

    /// Gives the scanner a copy of `bytes` (held while no line break arrives).
    pub fn copy(&mut self, bytes: &[u8]) {
        if memchr::memchr(b'\n', bytes).is_none() && self.held.len() + bytes.len() < HELD_BYTES {
            self.held.extend_from_slice(bytes);
            return;
        }
        self.flush();
        self.write_all(bytes);
    }

    fn flush(&mut self) {
        if !self.held.is_empty() {
            let held = std::mem::take(&mut self.held);
            self.write_all(&held);
            self.held = held;
            self.held.clear();
        }
    }

    /// Writes to the scanner's pipe, dropping its oldest unscanned bytes for room.
    fn write_all(&mut self, mut bytes: &[u8]) {
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

    /// Drops the oldest unscanned bytes: the scanner is a whole pipe behind. A scanner
    /// in the middle of a read is making room itself: then this waits for room a moment
    /// instead of for the lock, as the scanner runs at a low priority and may be
    /// descheduled while it holds it.
    pub fn make_room(&mut self) {
        let mut dropped = match self.shared.dropped.try_lock() {
            Ok(guard) => guard,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => {
                wait_for(self.write.as_fd(), libc::POLLOUT, 1);
                return;
            }
        };
        let n = discard(&self.shared.read, &self.null, DROP_BYTES);
        *dropped += n as u64;
    }
}

impl Drop for FeedWriter {
    fn drop(&mut self) {
        self.flush();
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
    /// The pipe's end the scanner reads, to wait on.
    pub(super) fn read_fd(&self) -> std::os::fd::RawFd {
        self.shared.read.as_raw_fd()
    }

    pub(super) fn pull(&mut self, ready: &mut Vec<u8>) {
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
            (&self.shared.read).read(&mut self.read_buf)
        };
        match read {
            Ok(0) => {
                self.open = false;
                if !self.partial.is_empty() {
                    self.partial.push(b'\n');
                    ready.append(&mut self.partial);
                }
                return;
            }
            Ok(n) => self.partial.extend_from_slice(&self.read_buf[..n]),
            // Nothing there after all (the writer dropped it meanwhile), or an error
            // that the next poll reports again.
            Err(e) => {
                if !matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) {
                    self.open = false;
                }
                return;
            }
        }
        hand_over_lines(&mut self.partial, start, ready);
    }
}

/// Moves the whole lines of `partial` (whose bytes from `start` on are new) to `ready`,
/// keeping the unfinished last line.
pub(super) fn hand_over_lines(partial: &mut Vec<u8>, start: usize, ready: &mut Vec<u8>) {
    let cut = match memchr::memrchr(b'\n', &partial[start..]) {
        Some(i) => start + i + 1,
        None if partial.len() >= LONGEST_HELD_LINE => partial.len(),
        None => return,
    };
    if ready.is_empty() {
        // Hand the buffer itself over; only the unfinished line is copied.
        let rest = partial[cut..].to_vec();
        partial.truncate(cut);
        std::mem::swap(ready, partial);
        *partial = rest;
    } else {
        ready.extend_from_slice(&partial[..cut]);
        partial.drain(..cut);
    }
}
