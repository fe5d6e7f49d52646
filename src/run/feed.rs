//! The log scanner's copy of the output. Passing the output on never waits for the
//! scanner to scan: each stream reaches it through a pipe of its own, and when the
//! scanner has fallen a whole pipe behind, the *oldest* unscanned quarter of that pipe is
//! dropped to make room, never the newest. So the scanner sees everything while it keeps
//! up, and whatever the load, the last three quarters of a pipeful of each stream (768 KiB
//! of [`PIPE_BYTES`]; somewhat less when it arrived in teed pieces, each of which takes a
//! page of the pipe however few bytes it holds, which is why small pieces are copied
//! instead, see `zero_copy`) is scanned: the final part, where a crash is. Where bytes
//! were dropped the scanner sees a line break, so no line is glued to a stranger. Output
//! to a regular file is not piped at all: the scanner follows the file ([`FileFeed`]).

use super::poll::{set_nonblocking, wait_for, EndSignal};
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
    open: bool,
}

/// Where each read lands before its bytes join the partial line: zeroed once, so that a
/// read costs a copy of what arrived, not a fill of the whole [`READ_BYTES`] as growing the
/// line buffer with `Vec::resize` did. (In release builds that fill could even run byte by
/// byte: rustc may link a copy of `resize`'s generic code from an unoptimised dependency.)
fn read_buffer() -> Box<[u8]> {
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
fn hand_over_lines(partial: &mut Vec<u8>, start: usize, ready: &mut Vec<u8>) {
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

/// A regular file the child writes to itself, read as it grows. While the child runs
/// nothing is lost, as the file keeps what the scanner has not read yet; once it has
/// ended, a scanner far behind skips to the file's last [`FINAL_SCAN_BYTES`], so that
/// `run` ends promptly and the final part, where a crash is, is still scanned.
pub struct FileFeed {
    file: File,
    offset: u64,
    partial: Vec<u8>,
    read_buf: Box<[u8]>,
    open: bool,
}

/// How much of a followed file is still scanned after the child has ended: more than
/// twice what a pipe keeps (768 KiB). The scanner runs at a low priority, so on a busy
/// machine this final scan is most of the time `run` adds to a job writing to a file:
/// at 16 MiB, 1 GiB to a file under 4 busy loops took 0.70-0.81x plain's time, at 2 MiB
/// 0.88-0.93x (`bench/run/throughput.py`).
pub const FINAL_SCAN_BYTES: u64 = 2 << 20;

impl FileFeed {
    pub fn new(file: File, from: u64) -> FileFeed {
        FileFeed { file, offset: from, partial: Vec::new(), read_buf: read_buffer(), open: true }
    }

    fn skip_to_the_final_part(&mut self, ready: &mut Vec<u8>) {
        let Ok(meta) = self.file.metadata() else { return };
        let final_part = meta.len().saturating_sub(FINAL_SCAN_BYTES);
        if self.offset < final_part {
            self.offset = final_part;
            // The line in progress lost its end: it ends here.
            if !self.partial.is_empty() {
                ready.append(&mut self.partial);
                ready.push(b'\n');
            }
        }
    }

    /// Reads what was added since the last call; once the child had ended before a
    /// read that finds nothing new, the file is done.
    fn pull(&mut self, ready: &mut Vec<u8>, child_had_ended: bool) {
        use std::os::unix::fs::FileExt;
        if child_had_ended {
            self.skip_to_the_final_part(ready);
        }
        let start = self.partial.len();
        let read = loop {
            match self.file.read_at(&mut self.read_buf, self.offset) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => break other,
            }
        };
        match read {
            Ok(n) if n > 0 => {
                self.partial.extend_from_slice(&self.read_buf[..n]);
                self.offset += n as u64;
                hand_over_lines(&mut self.partial, start, ready);
            }
            // Nothing new (or the file cannot be read any more).
            _ => {
                if child_had_ended || read.is_err() {
                    self.open = false;
                    if !self.partial.is_empty() {
                        self.partial.push(b'\n');
                        ready.append(&mut self.partial);
                    }
                }
            }
        }
    }
}

/// The scanner's nice value. Not 19: an unprivileged thread cannot raise its priority
/// again, and the final part must still be scanned promptly once the child has ended.
const SCANNER_NICE: libc::c_int = 10;

/// Sets the calling thread's nice value (on Linux, a thread's own); false if refused.
fn set_own_priority(nice: libc::c_int) -> bool {
    #[cfg(target_os = "linux")]
    {
        // The raw system call, not glibc's gettid(): that wrapper came with glibc 2.30, and the
        // manylinux2014 wheel links against glibc 2.17.
        // SAFETY: gettid takes no arguments; setpriority on this thread's own id changes only
        // its scheduling weight.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            libc::setpriority(libc::PRIO_PROCESS, tid, nice) == 0
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = nice;
        false
    }
}

/// Every stream's copy, read as one stream of whole lines.
pub struct ScanInput {
    feeds: Vec<FeedReader>,
    files: Vec<FileFeed>,
    child_ended: Arc<EndSignal>,
    ready: Vec<u8>,
    pos: usize,
}

/// How often a followed file is looked at while it is not growing.
const FILE_POLL_MS: libc::c_int = 20;

impl ScanInput {
    pub fn new(feeds: Vec<FeedReader>, files: Vec<FileFeed>, child_ended: Arc<EndSignal>) -> ScanInput {
        ScanInput { feeds, files, child_ended, ready: Vec::new(), pos: 0 }
    }

    /// Called on the scanner's own thread: the scanner gets a small share of a busy CPU,
    /// so that a job whose logging keeps every core busy is not slowed by its scanning;
    /// it then falls behind, which costs the oldest output, never the last.
    pub fn yield_to_the_job(&self) {
        set_own_priority(SCANNER_NICE);
    }

    fn is_done(&self) -> bool {
        self.feeds.iter().all(|f| !f.open) && self.files.iter().all(|f| !f.open)
    }

    /// Waits until some stream has something (or has ended) and takes it.
    fn refill(&mut self) {
        self.ready.clear();
        self.pos = 0;
        let mut ready = std::mem::take(&mut self.ready);
        let ended = self.child_ended.is_set();
        for file in self.files.iter_mut().filter(|f| f.open) {
            file.pull(&mut ready, ended);
        }
        self.ready = ready;
        if !self.ready.is_empty() || self.is_done() {
            return;
        }
        let following = self.files.iter().any(|f| f.open);
        let mut fds: Vec<libc::pollfd> = self
            .feeds
            .iter()
            .filter(|f| f.open)
            .map(|f| libc::pollfd { fd: f.shared.read.as_raw_fd(), events: libc::POLLIN, revents: 0 })
            .collect();
        if following {
            // A file is always readable: look again soon, or at once when the child ends.
            fds.push(libc::pollfd {
                fd: self.child_ended.wake_fd().as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
        }
        let timeout = if following { FILE_POLL_MS } else { -1 };
        // SAFETY: a valid array of pollfds of the given length.
        let polled = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
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
            if self.is_done() {
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
        ScanInput::new(feeds, Vec::new(), EndSignal::new().unwrap()).read_to_string(&mut s).unwrap();
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

    fn followed(content: &[u8], from: u64) -> FileFeed {
        // An unnamed file each: tests run in parallel threads of one process.
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(content).unwrap();
        FileFeed::new(file, from)
    }

    #[test]
    fn a_followed_file_is_read_from_where_the_output_starts_to_its_end() {
        let ended = EndSignal::new().unwrap();
        ended.set();
        let file = followed(b"written before\nline one\nlast, unfinished", 15);
        let mut s = String::new();
        ScanInput::new(Vec::new(), vec![file], ended.clone()).read_to_string(&mut s).unwrap();
        assert_eq!(s, "line one\nlast, unfinished\n");
        // Ending with a whole line: nothing left to hand out when the file is done.
        let mut s = String::new();
        ScanInput::new(Vec::new(), vec![followed(b"one\ntwo\n", 0)], ended).read_to_string(&mut s).unwrap();
        assert_eq!(s, "one\ntwo\n");
    }

    #[test]
    fn a_scanner_far_behind_an_ended_child_scans_only_the_final_part() {
        let ended = EndSignal::new().unwrap();
        ended.set();
        let line = b"[rank0]: step 1 | loss 0.48\n";
        let mut content = line.repeat((FINAL_SCAN_BYTES as usize * 2) / line.len());
        content.extend_from_slice(b"RuntimeError: CUDA error: device-side assert triggered\n");
        let mut s = String::new();
        ScanInput::new(Vec::new(), vec![followed(&content, 0)], ended).read_to_string(&mut s).unwrap();
        assert!(s.len() as u64 <= FINAL_SCAN_BYTES + 1, "{}", s.len());
        assert!(s.ends_with("\nRuntimeError: CUDA error: device-side assert triggered\n"));
    }
}
