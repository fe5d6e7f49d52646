//! What the start of an input says it is: a text log (perhaps with NUL padding or a stretch
//! of binary bytes inside, which is noise, as for `grep -a` and ripgrep's `--binary`), a
//! log written as UTF-16 (PowerShell's `>`), or a file that is binary through and through
//! (an image, a checkpoint, an archive), which is no log at all.

use std::io::{self, Read};

/// What an input is, from its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    /// UTF-16 with a byte order mark, little- or big-endian.
    Utf16 {
        big_endian: bool,
    },
    /// Not text: what it looks like.
    Binary(&'static str),
}

/// How much of the start decides.
pub const HEAD: usize = 64 << 10;

/// The shortest run of NUL bytes taken for padding: a node that dies while writing leaves
/// its log padded with long runs of NULs.
const NUL_PADDING: usize = 16;

/// Formats that are never logs, by their magic bytes.
const MAGIC: &[(&[u8], &str)] = &[
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"PK\x03\x04", "a zip archive (a PyTorch checkpoint, an .npz?)"),
    (b"\x1f\x8b", "gzip-compressed data (decompress it first: zcat FILE | assertscope explain)"),
    (b"\x28\xb5\x2f\xfd", "Zstandard-compressed data (decompress it first)"),
    (b"\xfd7zXZ\x00", "xz-compressed data (decompress it first)"),
    (b"BZh", "bzip2-compressed data (decompress it first)"),
    (b"\x7fELF", "an executable (ELF)"),
    (b"\x93NUMPY", "a NumPy array"),
    (b"PAR1", "a Parquet file"),
    (b"ARROW1", "an Arrow file"),
    (b"\x89HDF\r\n\x1a\n", "an HDF5 file"),
    (b"\x80\x02", "a Python pickle"),
    (b"\x80\x03", "a Python pickle"),
    (b"\x80\x04", "a Python pickle"),
    (b"\x80\x05", "a Python pickle"),
];

/// Classifies an input by its first bytes (up to [`HEAD`]).
pub fn kind(head: &[u8]) -> Kind {
    if head.starts_with(b"\xff\xfe") {
        return Kind::Utf16 { big_endian: false };
    }
    if head.starts_with(b"\xfe\xff") {
        return Kind::Utf16 { big_endian: true };
    }
    if let Some((_, what)) = MAGIC.iter().find(|(magic, _)| head.starts_with(magic)) {
        return Kind::Binary(what);
    }
    if mostly_binary(head) {
        return Kind::Binary("binary data");
    }
    Kind::Text
}

/// Whether fewer than half the bytes are text: printable characters, whitespace and
/// terminal escapes, in valid UTF-8. Long NUL runs (padding) count for nothing, so a log
/// with some NULs or a stretch of garbage inside stays a log.
fn mostly_binary(head: &[u8]) -> bool {
    let (mut text, mut other) = (0usize, 0usize);
    let mut rest = head;
    while let Some(&b) = rest.first() {
        if b == 0 {
            let run = rest.iter().take_while(|&&b| b == 0).count();
            if run < NUL_PADDING && run < rest.len() {
                other += run;
            }
            rest = &rest[run..];
            continue;
        }
        let len = utf8_len(rest);
        match len {
            Some(n) if n > 1 || is_text_byte(b) => text += n,
            Some(n) => other += n,
            None => other += 1,
        }
        rest = &rest[len.unwrap_or(1)..];
    }
    text + other >= 64 && other > text
}

fn is_text_byte(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\r' | 0x08 | 0x0c | 0x1b | 0x20..=0x7e)
}

/// The length of the UTF-8 character at the start, `None` if it is not one. A character
/// cut off at the end of the head counts as one.
fn utf8_len(bytes: &[u8]) -> Option<usize> {
    let len = match bytes[0] {
        0x00..=0x7f => return Some(1),
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return None,
    };
    let available = &bytes[..len.min(bytes.len())];
    if available.len() < len {
        return Some(available.len());
    }
    std::str::from_utf8(available).ok().map(str::len)
}

/// A UTF-16 stream (after its byte order mark) read as UTF-8; an unpaired surrogate
/// becomes U+FFFD, as a terminal shows it.
pub struct Utf16Reader<R> {
    inner: R,
    big_endian: bool,
    /// A byte of a code unit cut by a read.
    odd: Option<u8>,
    pending_surrogate: Option<u16>,
    out: Vec<u8>,
    at: usize,
}

impl<R: Read> Utf16Reader<R> {
    pub fn new(inner: R, big_endian: bool) -> Utf16Reader<R> {
        Utf16Reader { inner, big_endian, odd: None, pending_surrogate: None, out: Vec::new(), at: 0 }
    }

    /// Decodes the next block; false at the end of the input.
    fn fill(&mut self) -> io::Result<bool> {
        let mut raw = [0u8; 8192];
        let n = loop {
            match self.inner.read(&mut raw[1..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        self.out.clear();
        self.at = 0;
        if n == 0 {
            if self.pending_surrogate.take().is_some() || self.odd.take().is_some() {
                self.out.extend_from_slice("\u{fffd}".as_bytes());
            }
            return Ok(!self.out.is_empty());
        }
        let bytes = match self.odd.take() {
            Some(b) => {
                raw[0] = b;
                &raw[..n + 1]
            }
            None => &raw[1..n + 1],
        };
        let units = bytes.chunks_exact(2);
        self.odd = units.remainder().first().copied();
        for unit in units {
            let unit = match self.big_endian {
                true => u16::from_be_bytes([unit[0], unit[1]]),
                false => u16::from_le_bytes([unit[0], unit[1]]),
            };
            self.decode(unit);
        }
        Ok(true)
    }
}

impl<R> Utf16Reader<R> {
    fn decode(&mut self, unit: u16) {
        const REPLACEMENT: char = '\u{fffd}';
        let c = match (self.pending_surrogate.take(), unit) {
            (pending, 0xd800..=0xdbff) => {
                if pending.is_some() {
                    self.push(REPLACEMENT);
                }
                self.pending_surrogate = Some(unit);
                return;
            }
            (Some(high), 0xdc00..=0xdfff) => {
                char::decode_utf16([high, unit]).next().and_then(Result::ok).unwrap_or(REPLACEMENT)
            }
            (None, 0xdc00..=0xdfff) => REPLACEMENT,
            (pending, _) => {
                if pending.is_some() {
                    self.push(REPLACEMENT);
                }
                char::from_u32(u32::from(unit)).unwrap_or(REPLACEMENT)
            }
        };
        self.push(c);
    }

    fn push(&mut self, c: char) {
        self.out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
    }
}

impl<R: Read> Read for Utf16Reader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.out.len() {
            if !self.fill()? {
                return Ok(0);
            }
        }
        let n = buf.len().min(self.out.len() - self.at);
        buf[..n].copy_from_slice(&self.out[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_with_nuls_and_garbage_inside_is_text() {
        let mut log = b"Traceback (most recent call last):\n".repeat(40);
        log.insert(100, 0);
        log.extend_from_slice(&[0u8; 4000]);
        log.extend((0..1000u32).map(|i| (i * 7919 % 251) as u8));
        log.extend_from_slice(&b"RuntimeError: CUDA error: device-side assert triggered\n".repeat(20));
        assert_eq!(kind(&log), Kind::Text);
    }

    #[test]
    fn binary_files_are_named() {
        assert_eq!(kind(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), Kind::Binary("a PNG image"));
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect();
        assert_eq!(kind(&noise), Kind::Binary("binary data"));
        assert_eq!(kind(b"\xff\xfeT\0r\0"), Kind::Utf16 { big_endian: false });
    }

    #[test]
    fn utf16_is_read_as_utf8_whatever_the_read_sizes() {
        let text = "Traceback 😀 done\r\n";
        let mut bytes: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        bytes.push(b'x');
        let mut out = String::new();
        Utf16Reader::new(OneByte(&bytes), false).read_to_string(&mut out).unwrap();
        assert_eq!(out, format!("{text}\u{fffd}"));
    }

    /// A reader that hands out one byte per read.
    struct OneByte<'a>(&'a [u8]);

    impl Read for OneByte<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let Some((&b, rest)) = self.0.split_first() else { return Ok(0) };
            buf[0] = b;
            self.0 = rest;
            Ok(1)
        }
    }
}
