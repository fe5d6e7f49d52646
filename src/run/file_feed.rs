//! A regular file the child writes its output to, followed by the scanner as it grows.

use super::feed::{hand_over_lines, read_buffer};
use std::fs::File;
use std::io;

/// A regular file the child writes to itself, read as it grows. While the child runs
/// nothing is lost, as the file keeps what the scanner has not read yet; once it has
/// ended, a scanner far behind skips to the file's last [`FINAL_SCAN_BYTES`], so that
/// `run` ends promptly and the final part, where a crash is, is still scanned.
pub struct FileFeed {
    file: File,
    offset: u64,
    partial: Vec<u8>,
    read_buf: Box<[u8]>,
    pub(super) open: bool,
}

/// How much of a followed file is still scanned after the child has ended: more than
/// twice what a pipe keeps (768 KiB). The scanner runs at a low priority, so on a busy
/// machine this final scan is most of the time `run` adds to a job writing to a file:
/// at 16 MiB, 1 GiB to a file under 4 busy loops took 0.70-0.81x plain's time, at 2 MiB
/// 0.88-0.93x (`bench/run/throughput.py`).
pub const FINAL_SCAN_BYTES: u64 = 2 << 20;

impl FileFeed {
    pub fn new(file: File, from: u64) -> FileFeed {
        FileFeed { file, offset: from, partial: Vec::new(), read_buf: read_buffer(), open: true }
    }

    fn skip_to_the_final_part(&mut self, ready: &mut Vec<u8>) {
        let Ok(meta) = self.file.metadata() else { return };
        let final_part = meta.len().saturating_sub(FINAL_SCAN_BYTES);
        if self.offset < final_part {
            self.offset = final_part;
            // The line in progress lost its end: it ends here.
            if !self.partial.is_empty() {
                ready.append(&mut self.partial);
                ready.push(b'\n');
            }
        }
    }

    /// Reads what was added since the last call; once the child had ended before a
    /// read that finds nothing new, the file is done.
    pub(super) fn pull(&mut self, ready: &mut Vec<u8>, child_had_ended: bool) {
        use std::os::unix::fs::FileExt;
        if child_had_ended {
            self.skip_to_the_final_part(ready);
        }
        let start = self.partial.len();
        let read = loop {
            match self.file.read_at(&mut self.read_buf, self.offset) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => break other,
            }
        };
        match read {
            Ok(n) if n > 0 => {
                self.partial.extend_from_slice(&self.read_buf[..n]);
                self.offset += n as u64;
                hand_over_lines(&mut self.partial, start, ready);
            }
            // Nothing new (or the file cannot be read any more).
            _ => {
                if child_had_ended || read.is_err() {
                    self.open = false;
                    if !self.partial.is_empty() {
                        self.partial.push(b'\n');
                        ready.append(&mut self.partial);
                    }
                }
            }
        }
    }
}
