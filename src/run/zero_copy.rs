//! Passing a pipe's output on without copying it (Linux): `tee(2)` gives the scanner's
//! pipe a reference to the pages, `splice(2)` moves the same pages to fd 1 or 2. The
//! bytes never enter assertscope's memory, so the job's output is no slower for being
//! scanned.

use super::feed::FeedWriter;
use super::poll::{wait_for, wait_readable, EndSignal};
use super::sink::{pass_piece, PumpEnd, Sink, CHUNK};
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};

/// How passing on without copying went.
pub enum Passed {
    /// The stream ended (or its destination failed).
    Ended(PumpEnd),
    /// The source or the destination cannot be spliced (a pty, a file opened for
    /// appending, `/dev/full`): nothing has been lost, go on by copying.
    Unsupported,
}

/// Moves `source` (a pipe) to `sink` until it ends, teeing every byte to `feed`.
pub fn pass_on(source: &File, sink: Sink, feed: &mut FeedWriter, child_ended: &EndSignal) -> Passed {
    let mut moved_any = false;
    let mut small = vec![0u8; SMALL_PIECE];
    loop {
        // Looked at before the tee: a tee that finds nothing once the child had ended
        // means everything it wrote has been passed on.
        let ended = child_ended.is_set();
        let waiting = bytes_waiting(source);
        if waiting > 0 && waiting < SMALL_PIECE {
            if let Err(end) = copy_small(source, sink, feed, &mut small[..waiting]) {
                return Passed::Ended(end);
            }
            continue;
        }
        let n = match tee(source.as_fd(), feed.fd(), CHUNK) {
            Ok(0) => return Passed::Ended(PumpEnd::Drained),
            Ok(n) => n,
            Err(e) => match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) => {
                    if bytes_waiting(source) > 0 {
                        // Either the scanner's pipe is full (it is a whole pipe behind), or
                        // the job wrote between the tee, which found nothing, and the look:
                        // drop unscanned output only in the first case, else tee again.
                        if !writable_now(feed.fd()) {
                            feed.make_room();
                        }
                    } else if ended {
                        return Passed::Ended(PumpEnd::Drained);
                    } else {
                        wait_readable(source.as_fd(), child_ended.wake_fd());
                    }
                    continue;
                }
                Some(libc::EINVAL) if !moved_any => return Passed::Unsupported,
                _ => return Passed::Ended(PumpEnd::Drained),
            },
        };
        if let Err(end) = move_exactly(source, sink, n, &mut moved_any) {
            return end;
        }
    }
}

/// Below this many bytes waiting, a piece is copied rather than teed. Each tee takes a
/// buffer slot of the scanner's pipe however few bytes it holds (a pipe has one slot per
/// page of its capacity), so a job writing a line at a time would fill that pipe with a
/// few KiB and make it drop its unscanned lines; written bytes fill each slot's page.
const SMALL_PIECE: usize = 16 << 10;

/// Passes on a small piece by copying: read, write to `sink`, copy for the scanner.
fn copy_small(source: &File, sink: Sink, feed: &mut FeedWriter, buf: &mut [u8]) -> Result<(), PumpEnd> {
    let n = loop {
        match (&*source).read(buf) {
            Ok(0) => return Err(PumpEnd::Drained),
            Ok(n) => break n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // Only this thread reads the pipe, so what was waiting is still there.
            Err(_) => return Err(PumpEnd::Drained),
        }
    };
    pass_piece(&buf[..n], sink, feed)
}

/// Moves the `n` bytes just teed from `source` to `sink`.
fn move_exactly(source: &File, sink: Sink, mut n: usize, moved_any: &mut bool) -> Result<(), Passed> {
    while n > 0 {
        match splice(source.as_fd(), sink.fd(), n) {
            Ok(0) => return Err(Passed::Ended(PumpEnd::Drained)),
            Ok(m) => {
                n -= m;
                *moved_any = true;
            }
            Err(e) => match e.raw_os_error() {
                Some(libc::EINTR) => {}
                // The destination is non-blocking (the user's shell left it so) and full.
                Some(libc::EAGAIN) => wait_for(sink.fd(), libc::POLLOUT, -1),
                Some(libc::EINVAL) if !*moved_any => {
                    // The scanner already has these bytes: copy them on, then copy the rest.
                    let mut bytes = vec![0u8; n];
                    if let Err(e) = read_exactly(source, &mut bytes) {
                        return Err(Passed::Ended(PumpEnd::WriteFailed(sink, e)));
                    }
                    return match sink.write_all(&bytes) {
                        Ok(()) => Err(Passed::Unsupported),
                        Err(e) => Err(Passed::Ended(PumpEnd::from_write_error(sink, e))),
                    };
                }
                _ => return Err(Passed::Ended(PumpEnd::from_write_error(sink, e))),
            },
        }
    }
    Ok(())
}

/// Reads exactly `out.len()` bytes that are known to be in the pipe already.
fn read_exactly(source: &File, mut out: &mut [u8]) -> io::Result<()> {
    while !out.is_empty() {
        match (&*source).read(out) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => out = &mut out[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => wait_for(source.as_fd(), libc::POLLIN, -1),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn tee(from: BorrowedFd<'_>, to: BorrowedFd<'_>, len: usize) -> io::Result<usize> {
    // SAFETY: tee between two descriptors we hold; no user memory is involved.
    let n = unsafe { libc::tee(from.as_raw_fd(), to.as_raw_fd(), len, libc::SPLICE_F_NONBLOCK) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

fn splice(from: BorrowedFd<'_>, to: BorrowedFd<'_>, len: usize) -> io::Result<usize> {
    // SAFETY: splice between two descriptors we hold; no user memory is involved.
    let n = unsafe {
        libc::splice(from.as_raw_fd(), std::ptr::null_mut(), to.as_raw_fd(), std::ptr::null_mut(), len, 0)
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Whether a write to the pipe would find room now: a pipe is full when its buffer slots
/// are, which with many small teed pieces comes long before its byte capacity.
fn writable_now(pipe: BorrowedFd<'_>) -> bool {
    let mut pfd = libc::pollfd { fd: pipe.as_raw_fd(), events: libc::POLLOUT, revents: 0 };
    // SAFETY: one valid pollfd; a zero timeout only looks.
    let polled = unsafe { libc::poll(&mut pfd, 1, 0) };
    polled > 0 && pfd.revents & libc::POLLOUT != 0
}

/// How many bytes a pipe holds.
fn bytes_waiting(pipe: &File) -> usize {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int.
    let r = unsafe { libc::ioctl(pipe.as_raw_fd(), libc::FIONREAD, &mut n) };
    if r < 0 {
        0
    } else {
        n.max(0) as usize
    }
}
