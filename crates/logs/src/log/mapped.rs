//! Line access over a memory-mapped regular file, with the prefilter (`prefilter`) run
//! over chunks in parallel: the lines worth parsing are found at memory speed on every
//! core, and only they (and the lines around an open traceback) are handed out.
//!
//! Lines are handed out as `LineReader` hands them out, with the same numbers. Which
//! lines pass the prefilter is defined by `prefilter` (the streaming reader passes every
//! line with a trigger; on a file no larger than `Reach::tail` the two agree). Two
//! choices keep the reader exact and memory bounded:
//! - A file with a line that may reach `MAX_LINE` is refused (`None`): the streaming
//!   reader cuts such lines into pieces, which depends on its buffer, so it reads them.
//! - The file is searched a batch at a time, and each searched chunk's pages are
//!   released from the process at once (the page cache keeps them), so the resident set
//!   is a few chunks plus the candidates of one batch, whatever the file's size.

use super::prefilter::{Found, Prefilter, Reach};
use super::reader::{Line, LineSource, MAX_LINE};
use aho_corasick::AhoCorasick;
use rayon::prelude::*;
use std::io;

/// Bytes searched by one task.
const CHUNK: usize = 2 << 20;
/// Bytes searched before their candidate lines are consumed: bounds the candidate list.
const BATCH: usize = 32 << 20;
/// Bytes searched and then counted while they are in the core's cache.
const CACHED_BLOCK: usize = 128 << 10;
/// A line of `MAX_LINE` bytes covers at least one whole block of this size.
const LONG_LINE_BLOCK: usize = MAX_LINE / 2;
/// Blocks checked, and then released, together: a whole number of blocks, so that the
/// blocks are the file's whatever the spans.
const LONG_LINE_SPAN: usize = LONG_LINE_BLOCK * 32;

pub struct MappedLines<'a> {
    bytes: &'a [u8],
    /// The mapping `bytes` lie in, whose searched pages are released.
    map: Option<&'a memmap2::Mmap>,
    /// Start of the next line to hand out.
    pos: usize,
    /// 1-based number of the line that starts at `pos`.
    line_no: u64,
    /// Lines that passed the prefilter in the batches searched so far: (start, number).
    candidates: Vec<(usize, u64)>,
    next_candidate: usize,
    /// End of the bytes searched so far: the lines starting before it are decided.
    searched_to: usize,
    chunk: usize,
    batch: usize,
    reach: Reach,
    /// Newlines before `searched_to`.
    newlines_searched: u64,
    /// Start of the bytes whose pages the scan may still hold.
    released_to: usize,
}

impl<'a> MappedLines<'a> {
    /// `None` when the file may hold a line of `MAX_LINE` bytes or more.
    pub fn new(map: &'a memmap2::Mmap) -> Option<Self> {
        Self::with_chunks(&map[..], Some(map), CHUNK, BATCH, Reach::DEFAULT)
    }

    /// Over any bytes, with any chunk, batch and reach: tests and the fuzzer use tiny ones
    /// to put boundaries everywhere.
    pub fn with_chunks(
        bytes: &'a [u8],
        map: Option<&'a memmap2::Mmap>,
        chunk: usize,
        batch: usize,
        reach: Reach,
    ) -> Option<Self> {
        assert!(chunk > 0 && batch >= chunk, "chunks of {chunk} bytes in batches of {batch}");
        // Each block's check faults in a page (and the kernel's fault-around): the pages of
        // a span are released once it is checked, or the check alone would make the whole
        // file's worth resident. Spans are checked in parallel.
        let long_line = bytes.par_chunks(LONG_LINE_SPAN).enumerate().any(|(i, span)| {
            let found = span
                .chunks(LONG_LINE_BLOCK)
                .any(|block| block.len() == LONG_LINE_BLOCK && memchr::memchr(b'\n', block).is_none());
            release(map, i * LONG_LINE_SPAN, span.len());
            found
        });
        if long_line {
            return None;
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
            reach,
            released_to: 0,
        })
    }

    /// Hands out the given lines instead of searching: with `prefilter::reference_candidates`,
    /// the plain definition the search is tested against.
    #[doc(hidden)]
    pub fn with_candidates(bytes: &'a [u8], candidates: Vec<(usize, u64)>) -> Self {
        let newlines = count_newlines(bytes);
        MappedLines {
            bytes,
            map: None,
            pos: 0,
            line_no: 1,
            candidates,
            next_candidate: 0,
            searched_to: bytes.len(),
            newlines_searched: newlines,
            chunk: bytes.len().max(1),
            batch: bytes.len().max(1),
            reach: Reach::DEFAULT,
            released_to: 0,
        }
    }

    /// Decides the lines that start in the next batch: searches its chunks (and a margin
    /// of `reach.near` on either side) in parallel for the rare literals, then the
    /// windows around them and the tail for every trigger, and queues the lines found.
    fn search_batch(&mut self) {
        let bytes = self.bytes;
        let len = bytes.len();
        let map = self.map;
        let near = self.reach.near;
        // The lines handed out so far are done with: their pages can go.
        let done = memchr::memrchr(b'\n', &bytes[..self.pos]).map_or(0, |i| i + 1);
        if done > self.released_to {
            release(map, self.released_to, done - self.released_to);
            self.released_to = done;
        }
        let start = self.searched_to;
        let end = (start + self.batch).min(len);
        // The batch owns the lines that start in [start, end); the last one ends here.
        let owned_end = memchr::memchr(b'\n', &bytes[end - 1..]).map_or(len, |i| end + i);
        let margin_from = start.saturating_sub(near);
        let margin_to = (owned_end + near).min(len);
        let prefilter = Prefilter::get();
        let chunks: Vec<(usize, usize)> =
            (start..end).step_by(self.chunk).map(|from| (from, (from + self.chunk).min(end))).collect();
        let searched: Vec<(u64, Vec<Found>)> = chunks
            .par_iter()
            .map(|&(from, to)| {
                let mut found = Vec::new();
                // The first and last chunks also search the margins for seeds whose
                // reach crosses into this batch.
                if from == start {
                    prefilter.find_all(bytes, margin_from, from, &mut found);
                }
                // Searched and counted a block at a time, so that the count reads the
                // bytes from the core's cache, not from memory again.
                let mut newlines = 0;
                for block_from in (from..to).step_by(CACHED_BLOCK) {
                    let block_to = (block_from + CACHED_BLOCK).min(to);
                    prefilter.find_all(bytes, block_from, block_to, &mut found);
                    newlines += count_newlines(&bytes[block_from..block_to]);
                }
                if to == end {
                    prefilter.find_all(bytes, to, margin_to, &mut found);
                }
                release(map, from, to - from);
                (newlines, found)
            })
            .collect();

        let lines = self.lines_to_parse(&searched, start, end);
        release(map, margin_from, margin_to - margin_from);
        self.number_candidates(lines, &chunks, &searched, start);
        self.newlines_searched += searched.iter().map(|(n, _)| n).sum::<u64>();
        self.searched_to = end;
    }

    /// The starts of the lines owned by the batch `[start, end)` that are worth parsing: the
    /// lines that state an everywhere-trigger, and the trigger lines in the windows around
    /// the seeds found and in the tail; sorted, each once.
    fn lines_to_parse(&self, searched: &[(u64, Vec<Found>)], start: usize, end: usize) -> Vec<usize> {
        let bytes = self.bytes;
        let len = bytes.len();
        let near = self.reach.near;
        let prefilter = Prefilter::get();
        // The windows where every trigger counts, in order and merged: (first, last byte).
        // The tail is one window of its own; seeds inside it add nothing.
        let tail_from = if self.reach.tail > 0 { len.saturating_sub(self.reach.tail) } else { usize::MAX };
        let mut windows: Vec<(usize, usize)> = Vec::new();
        let mut stated_lines = Vec::new();
        let mut checked_line = None;
        for (_, found) in searched {
            for &f in found {
                match f {
                    Found::Seed(at) if at.saturating_sub(near) < tail_from => {
                        add_window(&mut windows, at.saturating_sub(near), (at + near).min(tail_from - 1))
                    }
                    Found::Seed(_) => {}
                    Found::Everywhere(at) => {
                        let line_start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
                        if (start..end).contains(&line_start) && checked_line != Some(line_start) {
                            checked_line = Some(line_start);
                            let line_end = memchr::memchr(b'\n', &bytes[at..]).map_or(len, |i| at + i);
                            if Prefilter::states_everywhere(&bytes[line_start..line_end]) {
                                stated_lines.push(line_start);
                            }
                        }
                    }
                }
            }
        }
        if tail_from != usize::MAX {
            add_window(&mut windows, tail_from, len);
        }
        let mut lines = stated_lines;
        for (lo, hi) in windows {
            if let Some((from, to)) = owned_lines_between(bytes, lo, hi, start, end) {
                prefilter.trigger_lines(bytes, from, to, &mut lines);
            }
        }
        lines.sort_unstable();
        lines.dedup();
        lines
    }

    /// Queues the lines to parse with their numbers: each chunk's newline count is known,
    /// so only the part of a chunk before its last candidate is counted again.
    fn number_candidates(
        &mut self,
        lines: Vec<usize>,
        chunks: &[(usize, usize)],
        searched: &[(u64, Vec<Found>)],
        start: usize,
    ) {
        let bytes = self.bytes;
        self.candidates.clear();
        self.next_candidate = 0;
        let mut chunk_index = 0;
        let mut chunk_newlines_before = 0u64;
        let mut counted_to = start;
        let mut newlines = 0u64;
        for line_start in lines {
            while line_start >= chunks[chunk_index].1 {
                chunk_newlines_before += searched[chunk_index].0;
                chunk_index += 1;
                counted_to = chunks[chunk_index].0;
                newlines = chunk_newlines_before;
            }
            newlines += count_newlines(&bytes[counted_to..line_start]);
            counted_to = line_start;
            self.candidates.push((line_start, self.newlines_searched + newlines + 1));
        }
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

/// Adds the bytes `[lo, hi]` to windows kept in order, merging those that touch.
fn add_window(windows: &mut Vec<(usize, usize)>, lo: usize, hi: usize) {
    match windows.last_mut() {
        Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
        _ => windows.push((lo, hi)),
    }
}

/// The byte range `[from, to)` of the lines that start in `[start, end)` and share a
/// byte with `[lo, hi]` (a line's last byte being its newline, or the end of the file).
fn owned_lines_between(
    bytes: &[u8],
    lo: usize,
    hi: usize,
    start: usize,
    end: usize,
) -> Option<(usize, usize)> {
    let len = bytes.len();
    let at = lo.max(start);
    if at >= len {
        return None;
    }
    let line_start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
    let from = if line_start >= start {
        line_start
    } else {
        // That line began in an earlier batch: it was decided there.
        at + memchr::memchr(b'\n', &bytes[at..])? + 1
    };
    let last = hi.min(end - 1).min(len - 1);
    if from > last {
        return None;
    }
    let to = memchr::memchr(b'\n', &bytes[last..]).map_or(len, |i| last + i + 1);
    Some((from, to))
}

/// Newlines in `bytes`. memchr counts them with SIMD; a hand-written SSE2/AVX2 counter
/// measured within noise of it on the bench log, so there is none.
fn count_newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

/// Releases the pages of `[from, from + len)` from this process; the page cache keeps them.
/// (A Unix hint: Windows has no such call, and there the pages simply stay mapped.)
#[cfg(unix)]
fn release(map: Option<&memmap2::Mmap>, from: usize, len: usize) {
    if let Some(map) = map {
        if len > 0 {
            // SAFETY: the mapping is read-only and file-backed: released pages are read
            // from the page cache again if touched.
            let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, len) };
        }
    }
}

#[cfg(not(unix))]
fn release(_map: Option<&memmap2::Mmap>, _from: usize, _len: usize) {}

impl<'a> LineSource for MappedLines<'a> {
    fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        Ok(self.line_at_pos())
    }

    /// The next line the prefilter passes; `_literals` (the streaming reader's trigger
    /// set) is part of the prefilter's own definition.
    fn next_matching_line(&mut self, _literals: &AhoCorasick) -> io::Result<Option<Line<'_>>> {
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
            self.search_batch();
        }
    }

    fn line_number(&self) -> u64 {
        self.line_no
    }

    fn bytes_read(&self) -> u64 {
        self.bytes.len() as u64
    }
}
