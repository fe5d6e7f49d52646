//! The progress line of long `check` runs: how much of the input is read, how fast and
//! the time left, redrawn in place on stderr (as tqdm draws a download).
//!
//! Why: a check of a few hundred GB of shards runs for minutes; without a sign of life users
//! kill it. It is drawn only while stderr is a terminal, so logs, pipes and `--json`
//! consumers get the report alone, byte for byte as without it; short runs (under
//! [`DELAY`]) never show it; the line is erased before the report is printed.
//!
//! How: readers report each finished unit (a byte range, a row group or a whole file); a
//! unit weighs its file's size divided by the file's number of units, which is
//! exact for the even splits the readers make. Line-oriented readers (CSV, JSON Lines,
//! text) also report each block they read, so the share moves at a steady rate inside a
//! unit of a few GB instead of jumping when the unit ends. A ticker thread redraws at most
//! every [`REDRAW`], so the rate and the time left keep moving between blocks.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A run shorter than this shows nothing.
pub const DELAY: Duration = Duration::from_millis(700);
/// The shortest time between two redraws.
pub const REDRAW: Duration = Duration::from_millis(150);
/// Overrides [`DELAY`] in milliseconds (tests and demonstrations of the line on small inputs).
pub const DELAY_VARIABLE: &str = "ASSERTSCOPE_PROGRESS_DELAY_MS";

/// A progress line, or nothing when it is not wanted. Finish it (or drop it) before the
/// report is written.
pub struct Progress {
    shared: Option<Arc<Shared>>,
    ticker: Option<JoinHandle<()>>,
}

struct Shared {
    what: &'static str,
    start: Instant,
    delay: Duration,
    file_bytes: Vec<u64>,
    total_bytes: u64,
    /// Units of each file in the current read plan.
    units: Mutex<Vec<u64>>,
    done_bytes: AtomicU64,
    state: Mutex<Drawing>,
    wake: Condvar,
}

#[derive(Default)]
struct Drawing {
    last: Option<Instant>,
    drawn: bool,
    finished: bool,
}

impl Progress {
    /// A progress line for reading files of these sizes, drawn only when `wanted` and stderr is
    /// a terminal.
    pub fn new(what: &'static str, file_bytes: Vec<u64>, wanted: bool) -> Progress {
        if !wanted || !std::io::stderr().is_terminal() {
            return Progress { shared: None, ticker: None };
        }
        let delay = std::env::var(DELAY_VARIABLE)
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map_or(DELAY, Duration::from_millis);
        let shared = Arc::new(Shared {
            what,
            start: Instant::now(),
            delay,
            total_bytes: file_bytes.iter().sum(),
            units: Mutex::new(vec![1; file_bytes.len()]),
            file_bytes,
            done_bytes: AtomicU64::new(0),
            state: Mutex::new(Drawing::default()),
            wake: Condvar::new(),
        });
        let ticking = Arc::clone(&shared);
        // Without a ticker the line still moves at each finished unit.
        let ticker = std::thread::Builder::new().name("progress".into()).spawn(move || ticking.tick()).ok();
        Progress { shared: Some(shared), ticker }
    }

    /// A progress line that draws nothing.
    pub fn off() -> Progress {
        Progress { shared: None, ticker: None }
    }

    /// The units of the read plan, as the file index of each.
    pub fn plan(&self, unit_files: impl IntoIterator<Item = u32>) {
        let Some(shared) = &self.shared else { return };
        let mut units = shared.units.lock().unwrap_or_else(|e| e.into_inner());
        units.iter_mut().for_each(|n| *n = 0);
        for file in unit_files {
            if let Some(n) = units.get_mut(file as usize) {
                *n += 1;
            }
        }
    }

    /// The bytes one unit of file `file` stands for: the file's size over its units.
    pub fn unit_bytes(&self, file: u32) -> u64 {
        let Some(shared) = &self.shared else { return 0 };
        let units = shared.units.lock().unwrap_or_else(|e| e.into_inner()).get(file as usize).copied();
        shared.file_bytes.get(file as usize).copied().unwrap_or(0) / units.unwrap_or(1).max(1)
    }

    /// A unit read `bytes` more while it goes on: the line moves within a large unit.
    pub fn bytes_read(&self, bytes: u64) {
        let Some(shared) = &self.shared else { return };
        shared.done_bytes.fetch_add(bytes, Ordering::Relaxed);
        shared.draw(false);
    }

    /// One unit of file `file` was read, after it had reported `reported` of its bytes itself.
    pub fn unit_read(&self, file: u32, reported: u64) {
        let Some(shared) = &self.shared else { return };
        shared.done_bytes.fetch_add(self.unit_bytes(file).saturating_sub(reported), Ordering::Relaxed);
        shared.draw(false);
    }

    /// Stops the ticker and erases the line, so that what follows starts on a clean line.
    pub fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        let Some(shared) = self.shared.take() else { return };
        {
            let mut state = shared.state.lock().unwrap_or_else(|e| e.into_inner());
            state.finished = true;
            if state.drawn {
                let _ = std::io::stderr().lock().write_all(b"\r\x1b[K");
            }
        }
        shared.wake.notify_all();
        if let Some(ticker) = self.ticker.take() {
            let _ = ticker.join();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Shared {
    fn tick(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while !state.finished {
            state = self.wake.wait_timeout(state, REDRAW).unwrap_or_else(|e| e.into_inner()).0;
            if state.finished {
                break;
            }
            drop(state);
            self.draw(true);
            state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        }
    }

    fn draw(&self, ticked: bool) {
        let now = Instant::now();
        let elapsed = now.duration_since(self.start);
        if elapsed < self.delay {
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.finished || (!ticked && state.last.is_some_and(|last| now.duration_since(last) < REDRAW)) {
            return;
        }
        state.last = Some(now);
        state.drawn = true;
        let line = self.line(elapsed);
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }

    fn line(&self, elapsed: Duration) -> String {
        let done = self.done_bytes.load(Ordering::Relaxed).min(self.total_bytes);
        line(self.what, done, self.total_bytes, elapsed)
    }
}

/// `\rcheck: 1.2 GB of 4.8 GB (25%)  600.0 MB/s  ETA 6s`, erasing the rest of the line.
pub fn line(what: &str, done: u64, total: u64, elapsed: Duration) -> String {
    let seconds = elapsed.as_secs_f64().max(1e-3);
    let mut text = format!("\r{what}: {} of {}", bytes(done), bytes(total));
    if let Some(share) = (done * 100).checked_div(total) {
        text += &format!(" ({share}%)");
    }
    if done > 0 {
        text += &format!("  {}/s", bytes((done as f64 / seconds) as u64));
    }
    if done > 0 && done < total {
        let left = seconds * (total - done) as f64 / done as f64;
        text += &format!("  ETA {}", duration(left));
    }
    text + "\x1b[K"
}

/// 512 B, 3.4 kB, 12.0 MB, 1.2 GB (powers of 1000, as file managers and `ls -h --si`).
fn bytes(n: u64) -> String {
    let units = ["B", "kB", "MB", "GB", "TB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < units.len() {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", units[unit])
    }
}

/// 42s, 3m07s, 1h02m.
fn duration(seconds: f64) -> String {
    let s = (seconds + 0.5) as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_gives_the_share_read_the_rate_in_bytes_and_the_time_left() {
        let text = line("check", 1_200_000_000, 4_800_000_000, Duration::from_secs(2));
        assert_eq!(text, "\rcheck: 1.2 GB of 4.8 GB (25%)  600.0 MB/s  ETA 6s\x1b[K");
    }

    #[test]
    fn a_finished_or_empty_read_has_no_time_left() {
        assert_eq!(line("check", 0, 0, Duration::from_secs(1)), "\rcheck: 0 B of 0 B\x1b[K");
        let done = line("check", 2_000, 2_000, Duration::from_secs(1));
        assert_eq!(done, "\rcheck: 2.0 kB of 2.0 kB (100%)  2.0 kB/s\x1b[K");
    }

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(duration(41.6), "42s");
        assert_eq!(duration(187.0), "3m07s");
        assert_eq!(duration(3720.0), "1h02m");
    }
}
