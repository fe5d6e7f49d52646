//! Signals sent to `run` are passed on to the command, so that `kill -USR1`, a batch
//! system's SIGTERM before a time limit, or a hang-up reach the job as they would
//! without `run`, and `run` itself lives on to report how the job ended.

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use signal_hook::consts::*;
use signal_hook::iterator::Signals;
use std::sync::atomic::{AtomicBool, Ordering};

/// Every signal whose default action would end `run` and that someone may send on
/// purpose. Not forwarded: the job-control signals (SIGTSTP, SIGCONT, … act on `run` and
/// the command alike), those the kernel raises for `run`'s own faults (SIGSEGV, …), and
/// the resource-limit signals that concern `run` itself (SIGXCPU, SIGXFSZ).
const FORWARDED: &[i32] =
    &[SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGWINCH];

pub struct Forwarder {
    signals: Signals,
    /// A keyboard's Ctrl-C and Ctrl-\ already reach the command, which shares our
    /// process group; passing them on would deliver them twice. Only those sent by a
    /// process (`kill -INT`) are passed on then.
    terminal_delivers_to_group: bool,
    sent_by_a_process: Vec<signal_hook::SigId>,
}

/// Set when SIGINT or SIGQUIT was sent by a process (`kill`), not raised by the
/// terminal for a key: told apart by the sender's code in the signal's siginfo.
static INT_SENT: AtomicBool = AtomicBool::new(false);
static QUIT_SENT: AtomicBool = AtomicBool::new(false);

fn sent_flag(sig: i32) -> &'static AtomicBool {
    if sig == SIGINT {
        &INT_SENT
    } else {
        &QUIT_SENT
    }
}

/// What `pending` saw besides signals it forwarded.
#[derive(Default)]
pub struct Received {
    pub resized: bool,
}

impl Forwarder {
    /// Installed before the command starts: a signal arriving in between is held, not
    /// allowed to kill `run` and orphan the command.
    pub fn install() -> anyhow::Result<Forwarder> {
        use std::io::IsTerminal;
        let mut sent_by_a_process = Vec::new();
        for sig in [SIGINT, SIGQUIT] {
            // SAFETY: the action only stores to an atomic, which is async-signal-safe.
            let id = unsafe {
                signal_hook_registry::register_sigaction(sig, move |info: &libc::siginfo_t| {
                    // SI_USER, SI_QUEUE, SI_TKILL, ...: codes <= 0 are sent by a process;
                    // the terminal's are the kernel's (SI_KERNEL).
                    if info.si_code <= 0 {
                        sent_flag(sig).store(true, Ordering::SeqCst);
                    }
                })
            }?;
            sent_by_a_process.push(id);
        }
        Ok(Forwarder {
            signals: Signals::new(FORWARDED)?,
            terminal_delivers_to_group: std::io::stdin().is_terminal(),
            sent_by_a_process,
        })
    }

    /// Forwards to `child` the signals that arrived since the last call.
    pub fn pending(&mut self, child: u32) -> Received {
        let child = Pid::from_raw(child as i32);
        let mut received = Received::default();
        for sig in self.signals.pending() {
            match sig {
                SIGWINCH => received.resized = true,
                SIGINT | SIGQUIT
                    if self.terminal_delivers_to_group && !sent_flag(sig).swap(false, Ordering::SeqCst) => {}
                other => {
                    if let Ok(s) = Signal::try_from(other) {
                        let _ = kill(child, s);
                    }
                }
            }
        }
        received
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        self.signals.handle().close();
        for id in self.sent_by_a_process.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}
