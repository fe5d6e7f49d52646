//! Line access over a memory-mapped regular file, with the literal prefilter run over
//! chunks in parallel: the lines worth parsing are found at memory speed on every core,
//! and only they (and the lines around an open traceback) are handed out.
//!
//! It hands out exactly the lines `LineReader` would, with the same numbers, so a scan
//! gives the same result either way. Two choices keep that true and memory bounded:
//! - A file with a line that may reach `MAX_LINE` is refused (`None`): the streaming
//!   reader cuts such lines into pieces, which depends on its buffer, so it reads them.
//! - The file is searched a batch at a time, and each searched chunk's pages are
//!   released from the process at once (the page cache keeps them), so the resident set
//!   is a few chunks plus the candidates of one batch, whatever the file's size.

use super::reader::{Line, LineSource, MAX_LINE};
use aho_corasick::{AhoCorasick, Input};
use rayon::prelude::*;
use std::io;

/// Bytes searched by one task.
const CHUNK: usize = 2 << 20;
/// Bytes searched before their candidate lines are consumed: bounds the candidate list.
const BATCH: usize = 32 << 20;
/// A line of `MAX_LINE` bytes covers at least one whole block of this size.
const LONG_LINE_BLOCK: usize = MAX_LINE / 2;

pub struct MappedLines<'a> {
    bytes: &'a [u8],
    /// The mapping `bytes` lie in, whose searched pages are released.
    map: Option<&'a memmap2::Mmap>,
    /// Start of the next line to hand out.
    pos: usize,
    /// 1-based number of the line that starts at `pos`.
    line_no: u64,
    /// Lines containing a literal in the batches searched so far: (start, number).
    candidates: Vec<(usize, u64)>,
    next_candidate: usize,
    /// Start of the first byte not yet searched.
    searched_to: usize,
    chunk: usize,
    batch: usize,
    /// Newlines before `searched_to`.
    newlines_searched: u64,
    /// Start of the bytes whose pages the scan may still hold.
    released_to: usize,
}

impl<'a> MappedLines<'a> {
    /// `None` when the file may hold a line of `MAX_LINE` bytes or more.
    pub fn new(map: &'a memmap2::Mmap) -> Option<Self> {
        Self::with_chunks(&map[..], Some(map), CHUNK, BATCH)
    }

    /// Over any bytes, with any chunk and batch sizes: tests and the fuzzer use tiny ones
    /// to put chunk boundaries everywhere.
    pub fn with_chunks(
        bytes: &'a [u8],
        map: Option<&'a memmap2::Mmap>,
        chunk: usize,
        batch: usize,
    ) -> Option<Self> {
        assert!(chunk > 0 && batch >= chunk, "chunks of {chunk} bytes in batches of {batch}");
        // Each block's check faults in a page (and the kernel's fault-around): release it
        // at once, or the check alone would make the whole file's worth resident.
        let mut long_line = false;
        for (i, block) in bytes.chunks(LONG_LINE_BLOCK).enumerate() {
            long_line |= block.len() == LONG_LINE_BLOCK && memchr::memchr(b'\n', block).is_none();
            release(map, i * LONG_LINE_BLOCK, block.len());
            if long_line {
                return None;
            }
        }
        Some(MappedLines {
            bytes,
            map,
            pos: 0,
            line_no: 1,
            candidates: Vec::new(),
            next_candidate: 0,
            searched_to: 0,
            newlines_searched: 0,
            chunk,
            batch,
            released_to: 0,
        })
    }

    /// Searches the next batch of chunks in parallel and queues its candidate lines.
    fn search_batch(&mut self, literals: &AhoCorasick) {
        let bytes = self.bytes;
        let map = self.map;
        // The lines handed out so far are done with: their pages can go.
        let done = memchr::memrchr(b'\n', &bytes[..self.pos]).map_or(0, |i| i + 1);
        if done > self.released_to {
            release(map, self.released_to, done - self.released_to);
            self.released_to = done;
        }
        let start = self.searched_to;
        let end = (start + self.batch).min(bytes.len());
        let chunks: Vec<(usize, usize)> =
            (start..end).step_by(self.chunk).map(|from| (from, (from + self.chunk).min(end))).collect();
        let found: Vec<ChunkLines> = chunks
            .par_iter()
            .map(|&(from, to)| {
                let lines = search_chunk(bytes, from, to, literals);
                release(map, from, to - from);
                lines
            })
            .collect();
        self.candidates.clear();
        self.next_candidate = 0;
        for chunk in found {
            for (line_start, newlines_in_chunk) in chunk.candidates {
                let number = self.newlines_searched + newlines_in_chunk + 1;
                // A line that crosses chunks can be found from both.
                if self.candidates.last().is_some_and(|&(last, _)| last == line_start) {
                    continue;
                }
                self.candidates.push((line_start, number));
            }
            self.newlines_searched += chunk.newlines;
        }
        self.searched_to = end;
    }

    fn line_at_pos(&mut self) -> Option<Line<'a>> {
        let bytes = self.bytes;
        if self.pos >= bytes.len() {
            return None;
        }
        let number = self.line_no;
        let start = self.pos;
        let mut line = match memchr::memchr(b'\n', &bytes[start..]) {
            Some(i) => {
                self.pos = start + i + 1;
                self.line_no += 1;
                &bytes[start..start + i]
            }
            None => {
                self.pos = bytes.len();
                &bytes[start..]
            }
        };
        if let [rest @ .., b'\r'] = line {
            line = rest;
        }
        Some(Line { bytes: line, number })
    }
}

/// Releases the pages of `[from, from + len)` from this process; the page cache keeps them.
fn release(map: Option<&memmap2::Mmap>, from: usize, len: usize) {
    if let Some(map) = map {
        if len > 0 {
            // SAFETY: the mapping is read-only and file-backed: released pages are read
            // from the page cache again if touched.
            let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, len) };
        }
    }
}

/// What one chunk holds: its newlines, and the lines with a literal that starts in it.
struct ChunkLines {
    newlines: u64,
    /// (line start, newlines between the chunk start and the line start). A line that
    /// began in an earlier chunk has no newline before it in this one: 0.
    candidates: Vec<(usize, u64)>,
}

fn search_chunk(bytes: &[u8], from: usize, to: usize, literals: &AhoCorasick) -> ChunkLines {
    let mut starts = Vec::new();
    // A literal that begins before `to` belongs here even if it ends after.
    let longest = literals.max_pattern_len();
    let search_end = (to + longest.saturating_sub(1)).min(bytes.len());
    let mut at = from;
    while at < to {
        let Some(m) = literals.find(Input::new(bytes).span(at..search_end)) else { break };
        if m.start() >= to {
            break;
        }
        let line_start = memchr::memrchr(b'\n', &bytes[..m.start()]).map_or(0, |i| i + 1);
        starts.push(line_start);
        // One candidate per line: go on from the next line.
        at = memchr::memchr(b'\n', &bytes[m.start()..]).map_or(bytes.len(), |i| m.start() + i + 1);
    }
    let mut candidates = Vec::with_capacity(starts.len());
    let mut counted_to = from;
    let mut newlines = 0u64;
    for line_start in starts {
        if line_start > counted_to {
            newlines += memchr::memchr_iter(b'\n', &bytes[counted_to..line_start]).count() as u64;
            counted_to = line_start;
        }
        candidates.push((line_start, newlines));
    }
    newlines += memchr::memchr_iter(b'\n', &bytes[counted_to.min(to)..to]).count() as u64;
    ChunkLines { newlines, candidates }
}

impl<'a> LineSource for MappedLines<'a> {
    fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        Ok(self.line_at_pos())
    }

    fn next_matching_line(&mut self, literals: &AhoCorasick) -> io::Result<Option<Line<'_>>> {
        loop {
            while let Some(&(start, number)) = self.candidates.get(self.next_candidate) {
                self.next_candidate += 1;
                // Lines already handed out line by line are not handed out again.
                if start >= self.pos {
                    self.pos = start;
                    self.line_no = number;
                    return Ok(self.line_at_pos());
                }
            }
            if self.searched_to >= self.bytes.len() {
                // Nothing left to hand out: the position is the end, as after a full read.
                if self.pos < self.bytes.len() {
                    self.pos = self.bytes.len();
                    self.line_no = self.newlines_searched + 1;
                }
                return Ok(None);
            }
            self.search_batch(literals);
        }
    }

    fn line_number(&self) -> u64 {
        self.line_no
    }

    fn bytes_read(&self) -> u64 {
        self.bytes.len() as u64
    }
}
