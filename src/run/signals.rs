//! The signals `run` handles while the command runs. Each one only raises a flag and
//! wakes the supervisor's loop (`wake_fd`), which decides what to do with it (`job`):
//! pass it on to the job's process group, relay a stop, reap a child.
//!
//! A signal that was ignored when `run` started (`nohup`, a shell starting a background
//! job without job control ignores SIGINT and SIGQUIT) is left ignored: the job inherits
//! the ignoring, as it would have without `run`, and `run` passes on nothing the job was
//! meant to be shielded from.

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// Signals passed on to the job: every signal whose default action would end `run` and
/// that someone may send on purpose. Not: those the kernel raises for `run`'s own faults
/// (SIGSEGV, …) and the resource-limit signals that concern `run` itself (SIGXCPU, SIGXFSZ).
pub const FORWARDED: &[i32] = &[
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGTERM,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGVTALRM,
    libc::SIGPROF,
];

/// Signals about the job and the terminal rather than for it: a child changed state, the
/// terminal was resized, `run` is asked to stop (Ctrl-Z while `run` holds the terminal) or
/// was continued.
const CONTROL: &[i32] = &[libc::SIGCHLD, libc::SIGWINCH, libc::SIGTSTP, libc::SIGCONT];

const SLOTS: usize = 65;
static PENDING: [AtomicBool; SLOTS] = [const { AtomicBool::new(false) }; SLOTS];
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);

pub struct Signals {
    ids: Vec<signal_hook_registry::SigId>,
    /// SIGCHLD was ignored when `run` started: `run` must handle it to wait for its child,
    /// and the job gets the ignoring back (`job::spawn`).
    pub chld_was_ignored: bool,
    wake_read: File,
    _wake_write: OwnedFd,
}

impl Signals {
    /// Installed before the command starts: a signal arriving in between is held, not
    /// allowed to kill `run` and orphan the command.
    pub fn install() -> anyhow::Result<Signals> {
        let (wake_read, wake_write) = std::io::pipe()?;
        let wake_read = File::from(OwnedFd::from(wake_read));
        let wake_write = OwnedFd::from(wake_write);
        super::poll::set_nonblocking(&wake_read);
        set_nonblocking_fd(wake_write.as_raw_fd());
        WAKE_FD.store(wake_write.as_raw_fd(), Ordering::SeqCst);
        let mut signals =
            Signals { ids: Vec::new(), chld_was_ignored: false, wake_read, _wake_write: wake_write };
        for &sig in FORWARDED.iter().chain(CONTROL) {
            let ignored = is_ignored(sig);
            if ignored && sig == libc::SIGCHLD {
                signals.chld_was_ignored = true;
            } else if ignored {
                continue; // left ignored, for the job to inherit
            }
            // SAFETY: the action stores to an atomic and writes to a pipe, both
            // async-signal-safe.
            let id = unsafe { signal_hook_registry::register(sig, move || raise_flag(sig)) }?;
            signals.ids.push(id);
        }
        Ok(signals)
    }

    /// Readable when a signal has arrived.
    pub fn wake_fd(&self) -> BorrowedFd<'_> {
        self.wake_read.as_fd()
    }

    /// The signals that arrived since the last call.
    pub fn take(&self) -> Vec<i32> {
        let mut scratch = [0u8; 64];
        while (&self.wake_read).read(&mut scratch).is_ok_and(|n| n > 0) {}
        (1..SLOTS as i32).filter(|&s| PENDING[s as usize].swap(false, Ordering::SeqCst)).collect()
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        WAKE_FD.store(-1, Ordering::SeqCst);
        for id in self.ids.drain(..) {
            signal_hook_registry::unregister(id);
        }
    }
}

/// Wakes the supervisor's loop from another thread (a pump that has finished).
pub fn wake() {
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        // SAFETY: a one-byte write to our own non-blocking pipe; a full pipe already wakes.
        unsafe { libc::write(fd, b"w".as_ptr().cast(), 1) };
    }
}

fn raise_flag(sig: i32) {
    if let Some(flag) = PENDING.get(sig as usize) {
        flag.store(true, Ordering::SeqCst);
    }
    wake();
}

fn is_ignored(sig: i32) -> bool {
    // SAFETY: sigaction with a null new action only reads the current one.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

fn set_nonblocking_fd(fd: i32) {
    // SAFETY: F_GETFL/F_SETFL on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
}

/// Stops `run`'s own process group with `sig` (SIGTSTP, SIGTTIN or SIGTTOU), as the
/// terminal would have stopped it with the job: the default action is put back for the
/// moment of the stop, so the kernel's rules apply (an orphaned group is not stopped).
/// Returns once `run` has been continued.
pub fn stop_own_group(sig: i32) {
    // SAFETY: sigaction swaps a disposition and restores it; kill(0, …) signals our group.
    unsafe {
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        let mut old: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(sig, &default, &mut old) != 0 {
            return;
        }
        libc::kill(0, sig);
        libc::sigaction(sig, &old, std::ptr::null_mut());
    }
}

/// Ends `run` the way its job ended, by `sig` with its default action, so that a shell
/// waiting for `run` sees the job's interrupt (a loop of runs stops at Ctrl-C). Returns
/// only if `sig` does not end the process.
pub fn die_of(sig: i32) {
    // SAFETY: resets one disposition and signals ourselves.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(sig);
    }
}
