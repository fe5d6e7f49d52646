//! CSV, TSV and one-label-per-line text. Unquoted files are split into byte ranges and
//! read in parallel by a hand-written field scanner; a file with quotes (or a malformed
//! row, for its exact position) is read sequentially with the `csv` crate.

use super::header::{first_record, FirstRecord, Wanted};
use super::lines::{for_each_line, naming_file, split};
use super::names::list_names_of;
use super::names::open;
use super::units::ColumnInfo;
use super::units::{FilePlan, Header, Layout, NeedsSequential, ReadCtx, ReadOptions, Unit, UnitEnd};
use crate::input::{Format, InputFile};
use crate::stats::{Bounds, Pos, Stats};
use anyhow::bail;
use std::path::PathBuf;
use std::sync::Arc;

/// How to find the label field in a line.
#[derive(Debug, Clone)]
struct Fields {
    /// `None` for plain text: the whole line is the value.
    delimiter: Option<u8>,
    /// 0-based index of the column.
    index: usize,
    /// The column as the user knows it (header name or index), for messages.
    label: String,
    header: bool,
    /// Where the data starts: after the header, or after a byte order mark.
    data_start: u64,
    /// The lines before the data (the header's).
    data_line: u64,
}

pub fn plan(file: &InputFile, opts: &ReadOptions) -> anyhow::Result<FilePlan> {
    let fields = Arc::new(resolve_fields(file, opts)?);
    let f = open(file)?;
    let len = f.metadata()?.len();
    let name = fields.header.then(|| fields.label.clone()).or_else(|| Some(fields.label.clone()));
    let column = ColumnInfo::new(name, "", Layout::Scalar);
    let path = Arc::new(file.path.clone());
    let ranges = split(fields.data_start, len, opts.parallelism);
    let units: Vec<Box<dyn Unit>> = ranges
        .into_iter()
        .map(|(start, end)| {
            Box::new(RangeUnit { path: path.clone(), fields: fields.clone(), start, end }) as Box<dyn Unit>
        })
        .collect();
    let sequential = Box::new(QuotedUnit { path: path.clone(), fields: fields.clone() });
    Ok(FilePlan { column, units, sequential: Some(sequential) })
}

pub fn count_rows(file: &InputFile, opts: &ReadOptions) -> anyhow::Result<u64> {
    let f = open(file)?;
    let delimiter = delimiter(file.format, opts);
    let first = first_record(&f, delimiter, &Wanted { name: None, index: None })
        .map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", file.display()))?;
    let header = match opts.header {
        Header::Yes => true,
        Header::No => false,
        Header::Auto => first.has_text,
    };
    let start = if header { first.end } else { 0 };
    let len = f.metadata()?.len();
    let mut rows = 0u64;
    for_each_line::<std::io::Error>(
        &f,
        start,
        len,
        |_| Ok(()),
        |line| {
            rows += u64::from(!line.is_empty());
            Ok(())
        },
    )
    .map_err(naming_file(&file.path))?;
    Ok(rows)
}

fn delimiter(format: Format, opts: &ReadOptions) -> Option<u8> {
    opts.delimiter.or(match format {
        Format::Tsv => Some(b'\t'),
        Format::Text => None,
        _ => Some(b','),
    })
}

/// Reads the first record to decide on the header and to find the column.
fn resolve_fields(file: &InputFile, opts: &ReadOptions) -> anyhow::Result<Fields> {
    let f = open(file)?;
    let delimiter = delimiter(file.format, opts);
    let asked_index = opts.column.as_deref().and_then(|c| c.parse::<usize>().ok());
    let wanted = Wanted { name: opts.column.as_deref(), index: asked_index.or(Some(0)) };
    let first = first_record(&f, delimiter, &wanted)
        .map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", file.display()))?;
    let header = match opts.header {
        Header::Yes => true,
        Header::No => false,
        Header::Auto => match &opts.column {
            Some(_) if asked_index.is_none() => true,
            _ => first.has_text,
        },
    };
    let index = column_index(file, opts, &first, header)?;
    let label = match header {
        true if first.named == Some(index) => opts.column.clone().unwrap_or_default(),
        true => first.at_index.clone().unwrap_or_default(),
        false => index.to_string(),
    };
    // A byte order mark is not data: skipped with the header, or alone.
    let (data_start, data_line) = match header {
        true => (first.end, first.lines),
        false => (if starts_with_bom(&f) { 3 } else { 0 }, 0),
    };
    Ok(Fields { delimiter, index, label, header, data_start, data_line })
}

/// The 0-based index of the column the options name in this first record.
fn column_index(
    file: &InputFile,
    opts: &ReadOptions,
    first: &FirstRecord,
    header: bool,
) -> anyhow::Result<usize> {
    let shown = file.display();
    let count = first.count;
    Ok(match (&opts.column, header) {
        (None, _) if count <= 1 => 0,
        (None, true) => {
            bail!("{shown}: pick a column with --column; the file has: {}", list_names_of(&first.names, count))
        }
        (None, false) => bail!(
            "{shown}: pick a column with --column (a 0-based index: the file has {count} columns and no header)"
        ),
        (Some(c), true) => match (first.named, c.parse::<usize>()) {
            (Some(i), _) => i,
            (None, Ok(i)) if i < count => i,
            _ => bail!(
                "{shown}: no column `{}`; the columns are: {}",
                super::names::shorten(c),
                list_names_of(&first.names, count)
            ),
        },
        (Some(c), false) => match c.parse::<usize>() {
            Ok(i) if i < count.max(1) => i,
            Ok(i) => bail!("{shown}: no column {i}: the first row has {count} columns (indices start at 0)"),
            Err(_) => bail!(
                "{shown}: no header row, so name the column by its 0-based index (the file has {count} columns)"
            ),
        },
    })
}

fn starts_with_bom(f: &std::fs::File) -> bool {
    let mut head = [0u8; 3];
    super::positional::read_exact_at(f, &mut head, 0).is_ok() && head == *b"\xef\xbb\xbf"
}

/// A byte range of an unquoted file.
struct RangeUnit {
    path: Arc<PathBuf>,
    fields: Arc<Fields>,
    start: u64,
    end: u64,
}

impl Unit for RangeUnit {
    fn read(&self, ctx: &ReadCtx, stats: &mut Stats) -> anyhow::Result<UnitEnd> {
        let file = std::fs::File::open(&*self.path)?;
        let fields = &*self.fields;
        let bounds = ctx.bounds;
        let mut rows = 0u64;
        // The first range starts after the header, on its line count.
        let mut lines = if self.start == fields.data_start { fields.data_line } else { 0 };
        let quotes_matter = fields.delimiter.is_some();
        let scanned = for_each_line::<anyhow::Error>(
            &file,
            self.start,
            self.end,
            |bytes| {
                if quotes_matter && memchr::memchr(b'"', bytes).is_some() {
                    return Err(NeedsSequential.into());
                }
                ctx.bytes_read(bytes.len());
                Ok(())
            },
            |line| {
                lines += 1;
                if line.is_empty() {
                    return Ok(());
                }
                let Some(field) = field_of(line, fields) else {
                    return Err(NeedsSequential.into());
                };
                let (row, line_no) = (rows, lines);
                value(stats, bounds, field, || Pos { row, line: Some(line_no), pos: None });
                rows += 1;
                Ok(())
            },
        );
        scanned.map_err(naming_file(&self.path))?;
        Ok(UnitEnd { rows, lines })
    }
}

#[inline]
fn field_of<'a>(line: &'a [u8], fields: &Fields) -> Option<&'a [u8]> {
    let Some(d) = fields.delimiter else { return Some(line) };
    let mut rest = line;
    for _ in 0..fields.index {
        let i = memchr::memchr(d, rest)?;
        rest = &rest[i + 1..];
    }
    let end = memchr::memchr(d, rest).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// One field's value into the stats.
#[inline]
fn value(stats: &mut Stats, bounds: &Bounds, field: &[u8], at: impl FnOnce() -> Pos) {
    match parse_int(field) {
        Some(v) => stats.int(v, bounds, at),
        None => unusual_value(stats, bounds, field, at()),
    }
}

#[cold]
fn unusual_value(stats: &mut Stats, bounds: &Bounds, field: &[u8], at: Pos) {
    let trimmed = field.trim_ascii();
    if trimmed.is_empty() {
        return stats.null(at);
    }
    if let Some(v) = parse_int(trimmed) {
        return stats.int(v, bounds, || at);
    }
    match std::str::from_utf8(trimmed).ok().and_then(|s| s.parse::<f64>().ok()) {
        Some(v) => stats.float(v, bounds, || at),
        None if is_null_word(trimmed) => stats.null(at),
        None => stats.text(trimmed, at),
    }
}

fn is_null_word(s: &[u8]) -> bool {
    matches!(s, b"NA" | b"N/A" | b"null" | b"NULL" | b"None" | b"nan" | b"NaN")
}

/// A plain decimal integer (no spaces, at most 18 digits).
#[inline]
pub fn parse_int(b: &[u8]) -> Option<i64> {
    let (neg, digits) = match b.first()? {
        b'-' => (true, &b[1..]),
        b'+' => (false, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut v: i64 = 0;
    for &c in digits {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + d as i64;
    }
    Some(if neg { -v } else { v })
}

/// The whole file, read sequentially by the `csv` crate (quoted fields, fields spanning
/// lines), with exact row and line numbers for errors.
struct QuotedUnit {
    path: Arc<PathBuf>,
    fields: Arc<Fields>,
}

impl Unit for QuotedUnit {
    fn read(&self, ctx: &ReadCtx, stats: &mut Stats) -> anyhow::Result<UnitEnd> {
        let file = std::fs::File::open(&*self.path)?;
        let fields = &*self.fields;
        let name = self.path.display();
        let Some(delimiter) = fields.delimiter else {
            // Text files have no quoting: the range reader is exact on a single range.
            let len = file.metadata()?.len();
            let start = fields.data_start;
            let unit = RangeUnit { path: self.path.clone(), fields: self.fields.clone(), start, end: len };
            return unit.read(ctx, stats);
        };
        let mut file = file;
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(fields.data_start))?;
        // Line numbers go on from the header's.
        let before = fields.data_line;
        let quotes =
            std::rc::Rc::new(std::cell::Cell::new(QuoteState { line: before, ..QuoteState::default() }));
        let reader =
            std::io::BufReader::with_capacity(1 << 20, QuoteTracker { inner: file, state: quotes.clone() });
        let mut csv = ::csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .has_headers(false)
            .flexible(true)
            .from_reader(reader);
        let mut record = ::csv::ByteRecord::new();
        let mut rows = 0u64;
        loop {
            let more = csv.read_byte_record(&mut record).map_err(|e| {
                if let ::csv::ErrorKind::Io(io) = e.kind() {
                    if let Some(runaway) = io.get_ref().and_then(|inner| inner.downcast_ref::<RunawayQuote>())
                    {
                        return anyhow::anyhow!("{name}:{}: malformed CSV: {runaway}", runaway.line);
                    }
                }
                match e.position() {
                    Some(p) => anyhow::anyhow!("{name}:{}: malformed CSV: {e}", p.line() + before),
                    None => anyhow::anyhow!("{name}: malformed CSV: {e}"),
                }
            })?;
            if !more {
                let state = quotes.get();
                if state.open {
                    bail!(
                        "{name}:{}: malformed CSV: the quote opened on line {} (row {}) is never closed, so it \
                         swallows the rest of the file",
                        state.opened_line,
                        state.opened_line,
                        rows.saturating_sub(1)
                    );
                }
                break;
            }
            let line = record.position().map(|p| p.line()).unwrap_or(0) + before;
            if record.len() == 1 && record[0].is_empty() {
                continue;
            }
            let Some(field) = record.get(fields.index) else {
                bail!(
                    "{name}:{line}: malformed row {rows} (line {line}): it has {} field{}, but column `{}` is field {}",
                    record.len(),
                    if record.len() == 1 { "" } else { "s" },
                    fields.label,
                    fields.index + 1
                );
            };
            value(stats, ctx.bounds, field, || Pos { row: rows, line: Some(line), pos: None });
            rows += 1;
        }
        let lines = csv.position().line().saturating_sub(1) + before;
        Ok(UnitEnd { rows, lines })
    }
}

/// Where a reader is in CSV quoting: the `csv` crate takes an unclosed quote as a field
/// that runs to the end of the file, silently, and keeps all of it in memory.
#[derive(Debug, Clone, Copy, Default)]
struct QuoteState {
    open: bool,
    /// 1-based line of the quote that is open.
    opened_line: u64,
    line: u64,
    /// Bytes read since the quote opened.
    open_bytes: u64,
    /// Bytes read since the last line break.
    line_bytes: u64,
}

/// A quoted field longer than this is a runaway quote, not data.
const MAX_QUOTED: u64 = super::lines::MAX_LINE as u64;

#[derive(Debug)]
struct RunawayQuote {
    line: u64,
    /// A single line that long, rather than a quoted field.
    one_line: bool,
}

impl std::fmt::Display for RunawayQuote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.one_line {
            write!(f, "line {} is longer than {} MiB: not a label file", self.line, MAX_QUOTED >> 20)
        } else {
            write!(
                f,
                "the quote opened on line {} runs on for more than {} MiB: is it closed?",
                self.line,
                MAX_QUOTED >> 20
            )
        }
    }
}

impl std::error::Error for RunawayQuote {}

/// Follows the quoting of the bytes the `csv` reader reads (a `""` inside a quoted field
/// closes and reopens, which leaves it open, as it should).
struct QuoteTracker<R> {
    inner: R,
    state: std::rc::Rc<std::cell::Cell<QuoteState>>,
}

impl<R: std::io::Read> std::io::Read for QuoteTracker<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let mut state = self.state.get();
        let mut last = 0;
        for i in memchr::memchr2_iter(b'"', b'\n', &buf[..n]) {
            if state.open {
                state.open_bytes += (i - last) as u64;
            }
            state.line_bytes += (i - last) as u64;
            last = i;
            if buf[i] == b'\n' {
                state.line += 1;
                state.line_bytes = 0;
            } else if state.open {
                state.open = false;
            } else {
                state = QuoteState { open: true, opened_line: state.line + 1, open_bytes: 0, ..state };
            }
        }
        if state.open {
            state.open_bytes += (n - last) as u64;
        }
        state.line_bytes += (n - last) as u64;
        let runaway = if state.line_bytes > MAX_QUOTED {
            Some(RunawayQuote { line: state.line + 1, one_line: true })
        } else {
            (state.open && state.open_bytes > MAX_QUOTED)
                .then_some(RunawayQuote { line: state.opened_line, one_line: false })
        };
        if let Some(runaway) = runaway {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, runaway));
        }
        self.state.set(state);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::parse_int;

    #[test]
    fn parses_plain_integers_only() {
        assert_eq!(parse_int(b"42"), Some(42));
        assert_eq!(parse_int(b"-100"), Some(-100));
        assert_eq!(parse_int(b"+7"), Some(7));
        assert_eq!(parse_int(b"3.0"), None);
        assert_eq!(parse_int(b" 3"), None);
        assert_eq!(parse_int(b""), None);
        assert_eq!(parse_int(b"-"), None);
        assert_eq!(parse_int(b"9999999999999999999"), None);
    }
}
