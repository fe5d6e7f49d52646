//! What the log scanner reads: every stream's copy (pipes and followed files) as one
//! stream of whole lines, on a thread that yields to the job.

use super::feed::FeedReader;
use super::file_feed::FileFeed;
use super::poll::EndSignal;
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::sync::Arc;

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
            .map(|f| libc::pollfd { fd: f.read_fd(), events: libc::POLLIN, revents: 0 })
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
            let fd = feed.read_fd();
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
    use crate::run::feed::{feed, PIPE_BYTES};
    use crate::run::file_feed::FINAL_SCAN_BYTES;
    use std::io::Write;

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
