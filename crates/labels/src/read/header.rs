//! The first record of a CSV, TSV or text file, read field by field: a header of any width
//! (a feature table with 100 000 columns before its label) is read in bounded memory, keeping
//! only what the reader needs: the names to show, whether any is text, the field asked for,
//! and where the data starts.

use super::positional::{read_at, read_exact_at};
use std::fs::File;

/// The names kept to show in a message.
const NAMES_KEPT: usize = 31;
/// The bytes of a field kept: more than any column name, more than any number.
const FIELD_KEPT: usize = 4096;
const BLOCK: usize = 64 << 10;

/// What the first record says.
#[derive(Debug, Default)]
pub struct FirstRecord {
    /// The first few fields, trimmed, for messages.
    pub names: Vec<String>,
    /// The number of fields.
    pub count: usize,
    /// Whether some field is neither empty nor a number (so the record is a header).
    pub has_text: bool,
    /// The first field equal to the name looked for.
    pub named: Option<usize>,
    /// The field at the index looked for, if there is one.
    pub at_index: Option<String>,
    /// The byte after the record and its line break.
    pub end: u64,
    /// The line the record ends on (1 for a one-line record, 0 for an empty file).
    pub lines: u64,
}

/// What to look for in the first record.
pub struct Wanted<'a> {
    pub name: Option<&'a str>,
    pub index: Option<usize>,
}

/// Reads the first record: fields split by `delimiter` with CSV quoting, or the whole first
/// line when there is no delimiter (plain text).
pub fn first_record(file: &File, delimiter: Option<u8>, wanted: &Wanted) -> std::io::Result<FirstRecord> {
    let mut record = FirstRecord::default();
    let mut scan = Scan { file, block: vec![0u8; BLOCK], filled: 0, used: 0, offset: 0, newlines: 0 };
    let mut field = Vec::new();
    match delimiter {
        Some(d) => {
            let mut csv = csv_core::ReaderBuilder::new().delimiter(d).build();
            let mut out = vec![0u8; FIELD_KEPT];
            loop {
                let eof = !scan.refill()?;
                let input = &scan.block[scan.used..scan.filled];
                let (result, read, written) = csv.read_field(input, &mut out);
                scan.consume(read);
                keep(&mut field, &out[..written]);
                match result {
                    csv_core::ReadFieldResult::InputEmpty if !eof => {}
                    csv_core::ReadFieldResult::OutputFull | csv_core::ReadFieldResult::InputEmpty => {}
                    csv_core::ReadFieldResult::Field { record_end } => {
                        record.add(&field, wanted);
                        field.clear();
                        if record_end {
                            break;
                        }
                    }
                    csv_core::ReadFieldResult::End => break,
                }
            }
            // A `\r\n` ends the record at its `\r`: the `\n` belongs to it too.
            if scan.previous()? == Some(b'\r') && scan.refill()? && scan.block[scan.used] == b'\n' {
                scan.consume(1);
            }
        }
        None => {
            while scan.refill()? {
                let input = &scan.block[scan.used..scan.filled];
                let end = memchr::memchr(b'\n', input);
                let take = end.map_or(input.len(), |i| i + 1);
                keep(&mut field, &input[..end.unwrap_or(input.len())]);
                scan.consume(take);
                if end.is_some() {
                    break;
                }
            }
            if scan.offset > 0 {
                let line = field.strip_suffix(b"\r").unwrap_or(&field).to_vec();
                record.add(&line, wanted);
            }
        }
    }
    record.end = scan.offset;
    let ends_in_newline = scan.previous()? == Some(b'\n');
    record.lines = scan.newlines + u64::from(!ends_in_newline && scan.offset > 0);
    Ok(record)
}

impl FirstRecord {
    fn add(&mut self, raw: &[u8], wanted: &Wanted) {
        let raw = if self.count == 0 { raw.strip_prefix("\u{feff}".as_bytes()).unwrap_or(raw) } else { raw };
        let text = String::from_utf8_lossy(raw);
        let name = text.trim();
        let index = self.count;
        self.count += 1;
        self.has_text |= !looks_numeric(name);
        if self.named.is_none() && wanted.name == Some(name) {
            self.named = Some(index);
        }
        if wanted.index == Some(index) {
            self.at_index = Some(name.to_string());
        }
        if self.names.len() < NAMES_KEPT {
            self.names.push(name.to_string());
        }
    }
}

/// An empty field or a number: data, not a column name.
pub fn looks_numeric(field: &str) -> bool {
    field.is_empty() || field.parse::<f64>().is_ok()
}

/// Appends to a field what fits in [`FIELD_KEPT`]: a longer field is neither a number nor a
/// name anyone asks for, and its start is enough to show it.
fn keep(field: &mut Vec<u8>, bytes: &[u8]) {
    let room = FIELD_KEPT.saturating_sub(field.len());
    field.extend_from_slice(&bytes[..bytes.len().min(room)]);
}

/// The file read block by block from its start.
struct Scan<'a> {
    file: &'a File,
    block: Vec<u8>,
    filled: usize,
    used: usize,
    /// Bytes consumed from the start of the file.
    offset: u64,
    /// Line breaks among them.
    newlines: u64,
}

impl Scan<'_> {
    /// Makes sure unread bytes are in the block; false at the end of the file.
    fn refill(&mut self) -> std::io::Result<bool> {
        if self.used < self.filled {
            return Ok(true);
        }
        let n = loop {
            match read_at(self.file, &mut self.block, self.offset) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        self.filled = n;
        self.used = 0;
        Ok(n > 0)
    }

    fn consume(&mut self, n: usize) {
        let bytes = &self.block[self.used..self.used + n];
        self.newlines += memchr::memchr_iter(b'\n', bytes).count() as u64;
        self.used += n;
        self.offset += n as u64;
    }

    /// The last byte consumed.
    fn previous(&self) -> std::io::Result<Option<u8>> {
        if self.offset == 0 {
            return Ok(None);
        }
        let mut b = [0u8; 1];
        read_exact_at(self.file, &mut b, self.offset - 1)?;
        Ok(Some(b[0]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn record(text: &[u8], delimiter: Option<u8>, name: Option<&str>, index: Option<usize>) -> FirstRecord {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(text).unwrap();
        first_record(&f, delimiter, &Wanted { name, index }).unwrap()
    }

    #[test]
    fn a_header_wider_than_any_buffer() {
        let mut text: Vec<u8> =
            (0..100_000).map(|i| format!("feature_{i},")).collect::<String>().into_bytes();
        text.extend_from_slice(b"label\n1,2\n");
        let r = record(&text, Some(b','), Some("label"), None);
        assert_eq!((r.count, r.named, r.lines, r.has_text), (100_001, Some(100_000), 1, true));
        assert_eq!(r.end as usize, text.len() - 4);
        assert_eq!(r.names.len(), NAMES_KEPT);
    }

    #[test]
    fn quoted_line_breaks_crlf_and_a_byte_order_mark() {
        let r = record(b"\xef\xbb\xbfid,\"the\nlabel\"\r\n0,1\r\n", Some(b','), Some("the\nlabel"), Some(0));
        assert_eq!((r.count, r.named, r.lines, r.end), (2, Some(1), 2, 19));
        assert_eq!(r.at_index.as_deref(), Some("id"));
        let r = record(b"3\n4\n", None, None, Some(0));
        assert_eq!((r.count, r.has_text, r.lines, r.end), (1, false, 1, 2));
        let r = record(b"label", None, None, None);
        assert_eq!((r.count, r.lines, r.end, r.names[0].as_str()), (1, 1, 5, "label"));
        let r = record(b"", Some(b','), None, None);
        assert_eq!((r.count, r.lines, r.end), (0, 0, 0));
    }
}
