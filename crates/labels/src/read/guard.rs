//! The boundary between a reader and the decoders it calls (parquet, arrow, png, zip):
//! whatever a corrupt file does to them ends in one error naming the file.
//!
//! A decoder that panics on bytes it did not expect (an index past a buffer, an
//! assertion on a length) is caught here, its panic message kept for the error and not
//! printed; a file whose reading takes far longer than its size can explain (a loop
//! over a count the file claims but does not hold) is stopped at its deadline, counted in
//! the reading thread's CPU time, so that neither a slow disk nor a busy machine brings a
//! real file to it.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;
use std::time::Duration;

/// Panics caught at the boundary since the process started: a decoder's bug met on a
/// corrupt file, which the fuzz targets count.
static CONTAINED: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// How many guarded calls this thread is inside: their panics are not printed.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// The message and place of the last panic caught on this thread.
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
    /// The thread CPU time by which the reading this thread does must have ended, and
    /// the budget it was given.
    static DEADLINE: Cell<Option<(Duration, Duration)>> = const { Cell::new(None) };
}

/// The number of decoder panics caught so far.
pub fn contained_panics() -> u64 {
    CONTAINED.load(Ordering::Relaxed)
}

/// Runs `read` on `file` (shown as `shown`, a file of format `format`); a panic inside it
/// becomes an error naming the file and what failed.
pub fn contain<T>(shown: &str, format: &str, read: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    install_hook();
    DEPTH.with(|d| d.set(d.get() + 1));
    let result = panic::catch_unwind(AssertUnwindSafe(read));
    DEPTH.with(|d| d.set(d.get() - 1));
    let result = result.map(|read| {
        // A decoder's error may span lines (flatbuffers' verifier lists where it was);
        // the message stays one line.
        read.map_err(|e| match format!("{e:#}") {
            text if text.contains('\n') => anyhow::anyhow!(one_line(&text)),
            _ => e,
        })
    });
    result.unwrap_or_else(|payload| {
        CONTAINED.fetch_add(1, Ordering::Relaxed);
        let what = LAST.with(|l| l.borrow_mut().take()).unwrap_or_else(|| payload_text(payload.as_ref()));
        Err(anyhow::anyhow!("{shown}: corrupt {format} data: the decoder failed: {what}"))
    })
}

/// Runs `read` with a deadline fitted to a file of `bytes` bytes: a reader's loops call
/// [`on_time`], which fails once the deadline has passed.
pub fn with_deadline<T>(bytes: u64, read: impl FnOnce() -> T) -> T {
    let budget = budget_for(bytes);
    let outer = DEADLINE.with(|d| d.replace(Some((thread_cpu_time() + budget, budget))));
    let result = read();
    DEADLINE.with(|d| d.set(outer));
    result
}

/// Time enough for any real file of `bytes` bytes: a floor for fixed costs, then a second
/// for every 64 KiB, which even deflate's densest output (1032 bytes a byte, 66 MB) decodes
/// in far less. A file still being read after that claims more than its bytes hold
/// (billions of nulls run-length encoded in a few bytes).
fn budget_for(bytes: u64) -> Duration {
    const FLOOR: Duration = Duration::from_secs(20);
    const SLOWEST_BYTES_PER_SECOND: u64 = 64 << 10;
    FLOOR + Duration::from_secs(bytes / SLOWEST_BYTES_PER_SECOND)
}

/// The CPU time this thread has used.
#[cfg(unix)]
fn thread_cpu_time() -> Duration {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given; this clock exists on Linux
    // and the BSDs since long.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec.max(0) as u64, t.tv_nsec.clamp(0, 999_999_999) as u32)
}

/// Elsewhere the time since the first reading started stands in for the thread's CPU time:
/// a deadline that may come sooner under load, never later.
#[cfg(not(unix))]
fn thread_cpu_time() -> Duration {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed()
}

/// Fails when the reading on this thread has run past its deadline.
pub fn on_time() -> Result<(), OutOfTime> {
    match DEADLINE.with(Cell::get) {
        Some((deadline, budget)) if thread_cpu_time() > deadline => Err(OutOfTime { budget }),
        _ => Ok(()),
    }
}

/// A reading stopped at its deadline.
#[derive(Debug)]
pub struct OutOfTime {
    budget: Duration,
}

impl std::fmt::Display for OutOfTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "still decoding after {} s of CPU time, far more than a file of this size needs: it \
             claims more values than its bytes hold (corrupt, or built to exhaust a reader)",
            self.budget.as_secs()
        )
    }
}

impl std::error::Error for OutOfTime {}

/// Keeps panics inside [`contain`] off stderr; every other panic is printed as before.
fn install_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if DEPTH.with(Cell::get) == 0 {
                return previous(info);
            }
            let message = payload_text(info.payload());
            let place = info.location().map(|l| format!(" ({}:{})", crate_path(l.file()), l.line()));
            LAST.with(|l| {
                *l.borrow_mut() = Some(one_line(&format!("{message}{}", place.unwrap_or_default())))
            });
        }));
    });
}

fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string())
}

/// `…/registry/src/index…/parquet-60.1.0/src/x.rs` -> `parquet-60.1.0/src/x.rs`: the
/// crate and file, without this machine's paths.
fn crate_path(file: &str) -> &str {
    let parts: Vec<usize> = file.match_indices("/src/").map(|(i, _)| i).collect();
    let Some(&src) = parts.last() else { return file };
    let start = file[..src].rfind('/').map_or(0, |i| i + 1);
    &file[start..]
}

/// One line of at most a few hundred characters.
fn one_line(text: &str) -> String {
    const MAX: usize = 400;
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= MAX {
        return flat;
    }
    let mut cut: String = flat.chars().take(MAX).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_one_line_naming_the_file() {
        let err = contain::<()>("data/x.parquet", "Parquet", || {
            let v: Vec<u8> = Vec::new();
            let i = v.len() + 3;
            let _ = v[i];
            Ok(())
        })
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("data/x.parquet: corrupt Parquet data: the decoder failed: index out of bounds"),
            "{err}"
        );
        assert!(!err.contains('\n'), "{err}");
        assert!(err.contains("labels/src/read/guard.rs:") || err.contains("src/read/guard.rs:"), "{err}");
    }

    #[test]
    fn an_error_passes_through_unchanged() {
        let err = contain::<()>("f", "NPY", || anyhow::bail!("truncated")).unwrap_err();
        assert_eq!(err.to_string(), "truncated");
    }

    #[test]
    fn crate_paths_lose_the_machine_part() {
        assert_eq!(
            crate_path("/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/parquet-60.1.0/src/encodings/rle.rs"),
            "parquet-60.1.0/src/encodings/rle.rs"
        );
        assert_eq!(crate_path("src/main.rs"), "src/main.rs");
    }

    #[test]
    fn the_deadline_grows_with_the_file() {
        assert!(budget_for(10 << 30) > budget_for(1 << 20));
        assert!(with_deadline(0, on_time).is_ok());
        assert!(on_time().is_ok(), "no deadline outside a reading");
    }
}
