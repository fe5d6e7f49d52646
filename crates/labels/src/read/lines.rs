//! Line-oriented files (CSV, TSV, text, JSON Lines) read in byte ranges, so that one big
//! file is checked by several threads, with a bounded buffer per thread.
//!
//! A range owns the lines that *start* inside it: it skips the partial line at its start
//! (the previous range finishes it) and reads past its end to finish its last line.

use super::positional;
use std::fs::File;

/// Bytes read per call; a line longer than this grows the buffer.
const BLOCK: usize = 4 << 20;
/// The longest line read: a label file's lines are short, and a longer one (a file that
/// is not line-oriented, or a runaway field) must not take all the memory there is.
pub const MAX_LINE: usize = 64 << 20;
/// Ranges smaller than this are not worth a thread of their own.
const MIN_RANGE: u64 = 8 << 20;

/// Splits `[start, len)` into about `parts` ranges of at least [`MIN_RANGE`] bytes.
pub fn split(start: u64, len: u64, parts: usize) -> Vec<(u64, u64)> {
    let span = len.saturating_sub(start);
    let parts = (span / MIN_RANGE).clamp(1, parts.max(1) as u64);
    let step = span.div_ceil(parts).max(1);
    let mut ranges = Vec::new();
    let mut at = start;
    while at < len {
        let end = (at + step).min(len);
        ranges.push((at, end));
        at = end;
    }
    if ranges.is_empty() {
        ranges.push((start, len));
    }
    ranges
}

/// Calls `each(line)` for every line that starts in `[start, end)`, without the line
/// terminator (`\n` or `\r\n`), and `block(bytes)` once for each run of bytes read
/// (before their lines). Stops early when either returns an error.
pub fn for_each_line<E>(
    file: &File,
    start: u64,
    end: u64,
    mut block: impl FnMut(&[u8]) -> Result<(), E>,
    mut each: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), E>
where
    E: From<std::io::Error>,
{
    let len = file.metadata()?.len();
    // Small files and ranges get small buffers; a long last line grows it.
    let mut buf = vec![0u8; (end.saturating_sub(start) as usize).clamp(4096, BLOCK)];
    let mut filled = 0usize;
    // File offset of buf[0].
    let mut base = start;
    let mut skip_partial = start > 0;
    if skip_partial {
        // The range starts a line only when the byte before it ends one.
        let mut prev = [0u8; 1];
        positional::read_exact_at(file, &mut prev, start - 1)?;
        skip_partial = prev[0] != b'\n';
    }
    let mut eof = false;
    loop {
        if !eof {
            if filled == buf.len() {
                if filled >= MAX_LINE {
                    return Err(line_too_long(base).into());
                }
                buf.resize((buf.len() * 2).min(MAX_LINE), 0);
            }
            let n = read_some(file, &mut buf[filled..], base + filled as u64)?;
            block(&buf[filled..filled + n])?;
            filled += n;
            eof = n == 0 || base + filled as u64 >= len;
        }
        let mut consumed = 0usize;
        if skip_partial {
            match memchr::memchr(b'\n', &buf[..filled]) {
                Some(i) => {
                    consumed = i + 1;
                    skip_partial = false;
                }
                None if eof => return Ok(()),
                None => {
                    // The whole buffer is the tail of a line owned by the previous range.
                    base += filled as u64;
                    filled = 0;
                    if base >= end {
                        return Ok(());
                    }
                    continue;
                }
            }
        }
        let origin = consumed;
        for nl in memchr::memchr_iter(b'\n', &buf[origin..filled]) {
            let line_start = consumed;
            if base + line_start as u64 >= end {
                return Ok(());
            }
            let stop = origin + nl;
            each(trim_cr(&buf[line_start..stop]))?;
            consumed = stop + 1;
        }
        if base + consumed as u64 >= end {
            return Ok(());
        }
        if eof {
            if consumed < filled {
                each(trim_cr(&buf[consumed..filled]))?;
            }
            return Ok(());
        }
        buf.copy_within(consumed..filled, 0);
        filled -= consumed;
        base += consumed as u64;
    }
}

/// A line longer than [`MAX_LINE`], starting at byte `offset`.
#[derive(Debug)]
pub struct LineTooLong {
    pub offset: u64,
}

impl std::fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the line at byte {} is longer than {} MiB: not a line-oriented label file",
            self.offset,
            MAX_LINE >> 20
        )
    }
}

impl std::error::Error for LineTooLong {}

fn line_too_long(offset: u64) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, LineTooLong { offset })
}

/// Names the file in a [`LineTooLong`] error (`for_each_line` only has the open file).
pub fn naming_file<E: Into<anyhow::Error>>(path: &std::path::Path) -> impl FnOnce(E) -> anyhow::Error + '_ {
    move |e| {
        let e = e.into();
        match e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|r| r.downcast_ref::<LineTooLong>())
        {
            Some(long) => anyhow::anyhow!("{}: {long}", path.display()),
            None => e,
        }
    }
}

fn read_some(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    loop {
        match positional::read_at(file, buf, offset) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

#[inline]
fn trim_cr(line: &[u8]) -> &[u8] {
    match line.last() {
        Some(b'\r') => &line[..line.len() - 1],
        _ => line,
    }
}

/// The first line of a file (at most `limit` bytes), without its terminator.
pub fn first_line(file: &File, limit: usize) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; limit];
    let mut filled = 0;
    while filled < limit {
        let n = read_some(file, &mut buf[filled..], filled as u64)?;
        if n == 0 {
            break;
        }
        if memchr::memchr(b'\n', &buf[filled..filled + n]).is_some() {
            filled += n;
            break;
        }
        filled += n;
    }
    buf.truncate(filled);
    let end = memchr::memchr(b'\n', &buf).unwrap_or(buf.len());
    buf.truncate(end);
    Ok(trim_cr(&buf).to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn lines_by_ranges(text: &[u8], parts: &[(u64, u64)]) -> Vec<Vec<u8>> {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(text).unwrap();
        let mut out = Vec::new();
        for &(s, e) in parts {
            for_each_line::<std::io::Error>(
                &f,
                s,
                e,
                |_| Ok(()),
                |l| {
                    out.push(l.to_vec());
                    Ok(())
                },
            )
            .unwrap();
        }
        out
    }

    #[test]
    fn every_line_is_read_once_whatever_the_split() {
        let text = b"a\nbb\r\nccc\n\ndddd\neeeee";
        let want = lines_by_ranges(text, &[(0, text.len() as u64)]);
        assert_eq!(want.len(), 6);
        assert_eq!(want[1], b"bb");
        for cut in 0..=text.len() as u64 {
            for cut2 in cut..=text.len() as u64 {
                let got = lines_by_ranges(text, &[(0, cut), (cut, cut2), (cut2, text.len() as u64)]);
                assert_eq!(got, want, "cuts at {cut}, {cut2}");
            }
        }
    }

    #[test]
    fn split_covers_the_whole_range() {
        let r = split(10, 100 << 20, 4);
        assert_eq!(r.first().unwrap().0, 10);
        assert_eq!(r.last().unwrap().1, 100 << 20);
        assert!(r.windows(2).all(|w| w[0].1 == w[1].0));
        assert_eq!(split(0, 0, 4), vec![(0, 0)]);
    }
}
