//! Log parsing: one streaming pass over a log turns it into the events a diagnosis
//! needs (assertion lines, tracebacks, standalone error lines, stated sizes, signs of
//! divergence). Lines that contain none of a small set of literals are skipped without
//! being decoded, so the pass runs at the speed of a literal search.

pub mod assertion;
pub mod chatter;
pub mod input;
pub mod line;
pub mod mapped;
pub mod paste;
pub mod prefilter;
pub mod ray;
pub mod ray_session;
pub mod reader;
mod scanner;
pub mod sniff;
pub mod traceback;
mod triggers;
pub mod wrap;

use scanner::scan_lines;
use std::io::Read;

pub use scanner::{AssertionGroup, Divergence, ErrorLine, LogScan, RankedTraceback};
pub use triggers::{trigger_literals, TRIGGERS};

/// Scans a log. `rank` is the rank the whole input belongs to, when known from its name.
pub fn scan<R: Read>(input: R, source: &str, rank: Option<u32>) -> std::io::Result<LogScan> {
    scan_lines(reader::LineReader::new(input), source, rank)
}

/// Scans a memory-mapped log, its prefilter running on every core (see `prefilter`
/// for the lines it passes: on a file no larger than its tail, exactly the lines `scan`
/// parses). `None` when a line is too long for the mapped reader's exact line handling
/// (see `mapped`): stream the file with `scan` instead.
pub fn scan_mapped(map: &memmap2::Mmap, source: &str, rank: Option<u32>) -> Option<std::io::Result<LogScan>> {
    mapped::MappedLines::new(map).map(|lines| scan_lines(lines, source, rank))
}

/// The mapped reader's scan of any bytes, with other chunk and batch sizes and the
/// default reach (for tests and fuzzing of its equivalence with `scan`).
#[doc(hidden)]
pub fn scan_in_chunks(
    bytes: &[u8],
    source: &str,
    chunk: usize,
    batch: usize,
) -> Option<std::io::Result<LogScan>> {
    scan_windowed(bytes, source, chunk, batch, prefilter::Reach::DEFAULT)
}

/// The mapped reader's scan of any bytes with any chunking and reach.
#[doc(hidden)]
pub fn scan_windowed(
    bytes: &[u8],
    source: &str,
    chunk: usize,
    batch: usize,
    reach: prefilter::Reach,
) -> Option<std::io::Result<LogScan>> {
    mapped::MappedLines::with_chunks(bytes, None, chunk, batch, reach)
        .map(|lines| scan_lines(lines, source, None))
}

/// The scan of the lines `prefilter::reference_candidates` passes: what `scan_windowed`
/// must give whatever its chunking.
#[doc(hidden)]
pub fn scan_reference(bytes: &[u8], source: &str, reach: prefilter::Reach) -> std::io::Result<LogScan> {
    let candidates = prefilter::reference_candidates(bytes, reach);
    scan_lines(mapped::MappedLines::with_candidates(bytes, candidates), source, None)
}
