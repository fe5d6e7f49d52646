//! Streaming line access over any `Read`, with a fast path that skips straight to the
//! next line containing one of a set of literals.
//!
//! Memory stays bounded whatever the input: the buffer grows to at most `MAX_BUFFER`, and
//! a line longer than `MAX_LINE` is handed out in `MAX_LINE`-sized pieces.

use aho_corasick::AhoCorasick;
use std::io::{self, Read};

const INITIAL_BUFFER: usize = 1 << 20;
const MAX_BUFFER: usize = 8 << 20;
/// Longest piece of one physical line handed to the parser.
pub const MAX_LINE: usize = 1 << 20;

pub struct LineReader<R> {
    source: R,
    buf: Vec<u8>,
    /// Start of unconsumed data in `buf`.
    pos: usize,
    /// End of valid data in `buf`.
    end: usize,
    eof: bool,
    /// 1-based number of the line that starts at `pos`.
    line_no: u64,
    /// The previous piece ended inside a line that is longer than `MAX_LINE`.
    mid_line: bool,
    bytes_read: u64,
}

/// One line (or one piece of an overlong line), without its terminator.
pub struct Line<'a> {
    pub bytes: &'a [u8],
    pub number: u64,
}

/// Where a scan gets its lines: a stream (`LineReader`) or a mapped file
/// (`mapped::MappedLines`). Both hand out the same lines with the same numbers.
pub trait LineSource {
    /// The next line, whatever it contains.
    fn next_line(&mut self) -> io::Result<Option<Line<'_>>>;
    /// The next line that contains a match of `literals`, skipping (and counting) the
    /// lines before it.
    fn next_matching_line(&mut self, literals: &AhoCorasick) -> io::Result<Option<Line<'_>>>;
    /// The number of the last line handed out (or of the line about to be).
    fn line_number(&self) -> u64;
    fn bytes_read(&self) -> u64;
}

impl<R: Read> LineSource for LineReader<R> {
    fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        LineReader::next_line(self)
    }
    fn next_matching_line(&mut self, literals: &AhoCorasick) -> io::Result<Option<Line<'_>>> {
        LineReader::next_matching_line(self, literals)
    }
    fn line_number(&self) -> u64 {
        LineReader::line_number(self)
    }
    fn bytes_read(&self) -> u64 {
        LineReader::bytes_read(self)
    }
}

impl<R: Read> LineReader<R> {
    pub fn new(source: R) -> Self {
        LineReader {
            source,
            buf: vec![0; INITIAL_BUFFER],
            pos: 0,
            end: 0,
            eof: false,
            line_no: 1,
            mid_line: false,
            bytes_read: 0,
        }
    }

    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// The number of the last line handed out (or of the line about to be).
    pub fn line_number(&self) -> u64 {
        self.line_no
    }

    /// The next line, whatever it contains.
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        loop {
            if let Some(nl) = memchr::memchr(b'\n', &self.buf[self.pos..self.end]) {
                return Ok(Some(self.take(self.pos + nl, true)));
            }
            if self.end - self.pos >= MAX_LINE {
                return Ok(Some(self.take(self.pos + MAX_LINE, false)));
            }
            if self.eof {
                if self.pos < self.end {
                    let end = self.end;
                    return Ok(Some(self.take(end, false)));
                }
                return Ok(None);
            }
            self.fill()?;
        }
    }

    /// The next line that contains a match of `literals`, skipping (and counting) the
    /// lines before it without looking at them further.
    pub fn next_matching_line(&mut self, literals: &AhoCorasick) -> io::Result<Option<Line<'_>>> {
        loop {
            // Search only whole lines: up to the last newline in the buffer.
            let window = &self.buf[self.pos..self.end];
            let complete = match memchr::memrchr(b'\n', window) {
                Some(i) => i + 1,
                None if self.eof || window.len() >= MAX_LINE => window.len(),
                None => 0,
            };
            if complete > 0 {
                let searched = &window[..complete];
                if let Some(m) = literals.find(searched) {
                    let line_start = memchr::memrchr(b'\n', &searched[..m.start()]).map_or(0, |i| i + 1);
                    self.skip(line_start);
                    return self.next_line();
                }
                self.skip(complete);
                continue;
            }
            if self.eof {
                return Ok(None);
            }
            self.fill()?;
        }
    }

    /// Consumes `n` bytes of whole lines without handing them out.
    fn skip(&mut self, n: usize) {
        let skipped = &self.buf[self.pos..self.pos + n];
        let newlines = memchr::memchr_iter(b'\n', skipped).count() as u64;
        if newlines > 0 {
            self.mid_line = skipped.last() != Some(&b'\n');
        }
        self.line_no += newlines;
        self.pos += n;
    }

    fn take(&mut self, line_end: usize, newline: bool) -> Line<'_> {
        let start = self.pos;
        let number = self.line_no;
        self.pos = if newline { line_end + 1 } else { line_end };
        if newline {
            self.line_no += 1;
            self.mid_line = false;
        } else {
            self.mid_line = true;
        }
        let mut bytes = &self.buf[start..line_end];
        if let [rest @ .., b'\r'] = bytes {
            bytes = rest;
        }
        Line { bytes, number }
    }

    /// Reads more input, first moving unconsumed bytes to the front of the buffer.
    fn fill(&mut self) -> io::Result<()> {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.end == self.buf.len() {
            let grown = (self.buf.len() * 2).min(MAX_BUFFER);
            if grown == self.buf.len() {
                // A full buffer without a line end is handled by the callers (MAX_LINE).
                return Ok(());
            }
            self.buf.resize(grown, 0);
        }
        loop {
            match self.source.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    self.bytes_read += n as u64;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<(u64, String)> {
        let mut r = LineReader::new(input);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push((l.number, String::from_utf8_lossy(l.bytes).into_owned()));
        }
        out
    }

    #[test]
    fn splits_lines_and_strips_crlf() {
        assert_eq!(
            lines(b"a\r\nb\n\nc"),
            vec![(1, "a".into()), (2, "b".into()), (3, "".into()), (4, "c".into())]
        );
    }

    #[test]
    fn skips_to_matching_lines_and_counts_the_rest() {
        let ac = AhoCorasick::new(["Error"]).unwrap();
        let mut r = LineReader::new(&b"ok\nfine\nRuntimeError: x\nok\nValueError\n"[..]);
        let first = r.next_matching_line(&ac).unwrap().unwrap();
        assert_eq!((first.number, first.bytes), (3, &b"RuntimeError: x"[..]));
        let second = r.next_matching_line(&ac).unwrap().unwrap();
        assert_eq!((second.number, second.bytes), (5, &b"ValueError"[..]));
        assert!(r.next_matching_line(&ac).unwrap().is_none());
    }

    #[test]
    fn overlong_lines_come_in_bounded_pieces() {
        let mut input = vec![b'x'; MAX_LINE * 2 + 10];
        input.extend_from_slice(b"\nend\n");
        let got = lines(&input);
        assert_eq!(got.len(), 4);
        assert!(got[..3].iter().all(|(n, _)| *n == 1));
        assert_eq!(got[0].1.len(), MAX_LINE);
        assert_eq!(got[3], (2, "end".into()));
    }
}
