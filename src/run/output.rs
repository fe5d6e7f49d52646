//! The child's output: passed through live to the user's terminal or file, and at the
//! same time streamed, in whole lines, to the log scanner that diagnoses it.

use std::io::{self, Read, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Where the child's output goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    Stdout,
    Stderr,
}

impl Sink {
    fn write_all(self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Sink::Stdout => {
                let mut out = io::stdout().lock();
                out.write_all(bytes)?;
                out.flush()
            }
            Sink::Stderr => {
                let mut err = io::stderr().lock();
                err.write_all(bytes)?;
                err.flush()
            }
        }
    }
}

/// Copies `source` to `sink` as it arrives and sends whole lines to `lines`.
pub fn pump<R: Read + Send + 'static>(
    mut source: R,
    sink: Sink,
    lines: SyncSender<Vec<u8>>,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        let mut partial: Vec<u8> = Vec::new();
        let mut sink_open = true;
        loop {
            let n = match source.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // A pty reports EIO once the child has closed its side.
                Err(_) => break,
            };
            let chunk = &buf[..n];
            // A closed pipe downstream (`| head`) must not stop the child's output from
            // being read, or the child would block on a full pipe.
            if sink_open && sink.write_all(chunk).is_err() {
                sink_open = false;
            }
            partial.extend_from_slice(chunk);
            let cut = match memchr::memrchr(b'\n', &partial) {
                Some(i) => i + 1,
                // A progress bar that never prints a newline still reaches the scanner.
                None if partial.len() >= 1 << 20 => partial.len(),
                None => continue,
            };
            let rest = partial.split_off(cut);
            let _ = lines.send(std::mem::replace(&mut partial, rest));
        }
        if !partial.is_empty() {
            partial.push(b'\n');
            let _ = lines.send(partial);
        }
    })
}

/// A channel of byte chunks read as one stream.
pub struct ChannelReader {
    rx: Receiver<Vec<u8>>,
    current: Vec<u8>,
    pos: usize,
}

/// A bounded channel: output arriving faster than it is scanned slows the writer
/// instead of growing memory.
pub fn channel() -> (SyncSender<Vec<u8>>, ChannelReader) {
    let (tx, rx) = sync_channel(256);
    (tx, ChannelReader { rx, current: Vec::new(), pos: 0 })
}

impl Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos >= self.current.len() {
            match self.rx.recv() {
                Ok(chunk) => {
                    self.current = chunk;
                    self.pos = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.current.len() - self.pos);
        out[..n].copy_from_slice(&self.current[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
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

    #[test]
    fn chunks_become_one_stream() {
        let (tx, mut rx) = channel();
        tx.send(b"ab\n".to_vec()).unwrap();
        tx.send(b"cd\n".to_vec()).unwrap();
        drop(tx);
        let mut s = String::new();
        rx.read_to_string(&mut s).unwrap();
        assert_eq!(s, "ab\ncd\n");
    }
}
