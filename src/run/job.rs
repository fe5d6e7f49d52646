//! The job: the command in a process group of its own, as `timeout` runs it, so that a
//! signal for the job reaches every process of it exactly once.
//!
//! - A signal sent to `run` (by `kill`, a batch system, a shell hanging up its jobs) is
//!   passed on to the job's whole group: `bash -c "python train.py; echo done"` gets it in
//!   `python` as well as in `bash`. SIGTERM also reaches the job's processes that left
//!   the group (`setsid`), found below `run` on Linux (`tree`).
//! - A signal sent to `run`'s group (Ctrl-C while `run` has the terminal) reaches `run`
//!   alone, which passes it on once; one the terminal sends to the job's group (Ctrl-C
//!   once the job has the terminal) reaches the job alone. Nothing arrives twice.
//! - The terminal: when `run` was started as a job of its own at an interactive prompt
//!   (it leads its group, which has the terminal, and reads the terminal on stdin), the job
//!   gets the terminal as that job would have: it can read it (`breakpoint()`), Ctrl-C
//!   and Ctrl-Z reach it. Otherwise the job gets it when it first tries to read it.
//! - Stops are relayed: when the job stops (Ctrl-Z), `run` takes the terminal back and
//!   stops its own group, so the shell sees a stopped job; `fg` and `bg` continue `run`,
//!   which continues the job (giving it the terminal again on `fg`).
//! - A job that ignores SIGTERM is killed `KILL_AFTER` later, as `timeout -k` does.
//!
//! On Linux `run` is also the job's subreaper: a process the job leaves behind (a
//! double-forked daemon) stays below `run`, which reaps it and can find it (`tree`).

use super::options::Ended;
use super::signals::{self, Signals};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::{Duration, Instant};

/// How long after SIGTERM (or SIGHUP) a job that is still running is sent SIGKILL.
pub const KILL_AFTER: Duration = Duration::from_secs(10);

/// `run`'s controlling terminal, when stdin is it.
#[derive(Clone, Copy)]
struct Terminal;

impl Terminal {
    const FD: libc::c_int = libc::STDIN_FILENO;

    fn on_stdin() -> Option<Terminal> {
        // SAFETY: isatty, tcgetsid and getsid only read process and terminal state.
        unsafe {
            let ours = libc::isatty(Self::FD) == 1 && libc::tcgetsid(Self::FD) == libc::getsid(0);
            ours.then_some(Terminal)
        }
    }

    fn foreground(self) -> libc::pid_t {
        // SAFETY: reads the terminal's foreground group.
        unsafe { libc::tcgetpgrp(Self::FD) }
    }

    /// Makes `pgrp` the terminal's foreground group; SIGTTOU is held meanwhile, as a shell
    /// does, since the caller may itself be in the background by then.
    fn give_to(self, pgrp: libc::pid_t) {
        // SAFETY: blocks SIGTTOU on this thread around one tcsetpgrp, then restores the mask.
        unsafe { give_terminal(Self::FD, pgrp) };
    }
}

/// tcsetpgrp with SIGTTOU blocked; async-signal-safe (also used between fork and exec).
unsafe fn give_terminal(fd: libc::c_int, pgrp: libc::pid_t) {
    let mut set: libc::sigset_t = std::mem::zeroed();
    let mut old: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut set);
    libc::sigaddset(&mut set, libc::SIGTTOU);
    libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
    libc::tcsetpgrp(fd, pgrp);
    libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
}

/// What `run` decided before starting the job.
pub struct Launch {
    terminal: Option<Terminal>,
    hand_over_at_start: bool,
}

/// Puts the command into a process group of its own and decides about the terminal.
/// `keep_open`: a descriptor the job inherits (`Materialized::lock_fd`).
pub fn prepare(cmd: &mut Command, signals: &Signals, keep_open: Option<libc::c_int>) -> Launch {
    become_subreaper();
    let terminal = Terminal::on_stdin();
    // SAFETY: getpgrp/getpid cannot fail.
    let (own_pgrp, own_pid) = unsafe { (libc::getpgrp(), libc::getpid()) };
    let hand_over_at_start = terminal.is_some_and(|t| t.foreground() == own_pgrp)
        && own_pgrp == own_pid
        && !is_pipe(libc::STDOUT_FILENO)
        && !is_pipe(libc::STDERR_FILENO);
    let chld_was_ignored = signals.chld_was_ignored;
    // SAFETY: only async-signal-safe calls between fork and exec: setpgid, sigprocmask,
    // tcsetpgrp, signal, fcntl.
    unsafe {
        cmd.pre_exec(move || {
            libc::setpgid(0, 0);
            if hand_over_at_start {
                give_terminal(Terminal::FD, libc::getpid());
            }
            if chld_was_ignored {
                libc::signal(libc::SIGCHLD, libc::SIG_IGN);
            }
            if let Some(fd) = keep_open {
                libc::fcntl(fd, libc::F_SETFD, 0);
            }
            Ok(())
        });
    }
    Launch { terminal, hand_over_at_start }
}

/// A pipe (or socket) on `fd`: `run` is then one stage of a pipeline whose other stages
/// (a pager) may need the terminal themselves.
fn is_pipe(fd: libc::c_int) -> bool {
    // SAFETY: fstat writes one stat struct.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(fd, &mut st) == 0 && matches!(st.st_mode & libc::S_IFMT, libc::S_IFIFO | libc::S_IFSOCK)
    }
}

fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_CHILD_SUBREAPER only changes who inherits our orphaned descendants.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

impl Launch {
    pub fn spawn(self, cmd: &mut Command) -> std::io::Result<Job> {
        let child = cmd.spawn()?;
        let pid = child.id() as libc::pid_t;
        // The child set its group itself; setting it here too closes the race with
        // anything done below (a signal to the group) before the child got that far.
        // SAFETY: setpgid on our own child; failing once it has exec'd is harmless.
        unsafe { libc::setpgid(pid, pid) };
        if let (true, Some(t)) = (self.hand_over_at_start, self.terminal) {
            t.give_to(pid);
        }
        // SAFETY: getpgrp cannot fail.
        let own_pgrp = unsafe { libc::getpgrp() };
        Ok(Job {
            pid,
            terminal: self.terminal,
            own_pgrp,
            job_has_terminal: self.hand_over_at_start,
            ended: None,
            kill_due: None,
            kill_sent: false,
            asked_to_end: None,
            interrupted_by: None,
        })
    }
}

pub struct Job {
    /// The command's process, which leads the job's process group.
    pub pid: libc::pid_t,
    terminal: Option<Terminal>,
    own_pgrp: libc::pid_t,
    /// The job had the terminal (it gets it back when `run` is continued in the foreground).
    job_has_terminal: bool,
    ended: Option<(Ended, Instant)>,
    kill_due: Option<Instant>,
    kill_sent: bool,
    /// When `run` passed on a signal asking the job to end (HUP, INT, QUIT, TERM).
    asked_to_end: Option<Instant>,
    /// SIGINT or SIGQUIT that `run` itself received and passed on.
    interrupted_by: Option<i32>,
}

impl Job {
    /// Sends `sig` to every process of the job's group.
    pub fn signal(&self, sig: i32) {
        // SAFETY: kill of our own child's process group.
        unsafe { libc::kill(-self.pid, sig) };
    }

    /// Ends the job (SIGTERM, SIGKILL): its group, and the processes of the job that left
    /// it (`setsid`, a daemon), which a batch system ending the job ends too. Each gets the
    /// signal once. (A hang-up or an interrupt is for the group only: leaving it is how a
    /// process is shielded from them.)
    pub fn end_with(&self, sig: i32) {
        self.signal(sig);
        for m in super::tree::members() {
            // SAFETY: getpgid and kill on our own descendants.
            unsafe {
                let group = libc::getpgid(m.pid);
                if group != self.pid && group >= 0 {
                    libc::kill(m.pid, sig);
                }
            }
        }
    }

    /// Acts on the signals `run` received; returns true if the terminal was resized.
    pub fn on_signals(&mut self, received: &[i32]) -> bool {
        let mut resized = false;
        for &sig in received {
            match sig {
                libc::SIGCHLD => {}
                libc::SIGWINCH => resized = true,
                libc::SIGTSTP => {
                    // Ctrl-Z while `run`'s group has the terminal, or `kill -TSTP`: the job
                    // stops too, then `run`, so that the shell sees the job stopped.
                    self.signal(libc::SIGTSTP);
                    stop_self(libc::SIGTSTP);
                    self.continued();
                }
                libc::SIGCONT => self.continued(),
                _ => self.pass_on(sig),
            }
        }
        resized
    }

    fn pass_on(&mut self, sig: i32) {
        if sig == libc::SIGTERM {
            self.end_with(sig);
        } else {
            self.signal(sig);
        }
        if matches!(sig, libc::SIGHUP | libc::SIGINT | libc::SIGQUIT | libc::SIGTERM) {
            self.asked_to_end.get_or_insert_with(Instant::now);
        }
        if matches!(sig, libc::SIGHUP | libc::SIGTERM) && self.ended.is_none() {
            self.kill_due.get_or_insert_with(|| Instant::now() + KILL_AFTER);
        }
        if matches!(sig, libc::SIGINT | libc::SIGQUIT) {
            self.interrupted_by = Some(sig);
        }
    }

    /// `run` was continued (`fg`, `bg`, or it was never stopped): the job continues too,
    /// with the terminal if it had it and `run` has it now.
    fn continued(&mut self) {
        if let Some(t) = self.terminal {
            if self.job_has_terminal && self.ended.is_none() && t.foreground() == self.own_pgrp {
                t.give_to(self.pid);
            }
        }
        self.signal(libc::SIGCONT);
    }

    /// Collects every child that changed state: the job's own process (its end, its
    /// stops) and, on Linux, the orphans left to `run` as subreaper.
    pub fn reap(&mut self) {
        loop {
            let mut status = 0;
            // SAFETY: waitpid writes one int.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG | libc::WUNTRACED) };
            if pid <= 0 {
                return;
            }
            if pid != self.pid {
                continue; // an orphan of the job, now collected
            }
            if libc::WIFSTOPPED(status) {
                self.stopped(libc::WSTOPSIG(status));
            } else if libc::WIFEXITED(status) {
                self.end(Ended::Exited(libc::WEXITSTATUS(status)));
            } else if libc::WIFSIGNALED(status) {
                self.end(Ended::Signaled(libc::WTERMSIG(status)));
            }
        }
    }

    fn stopped(&mut self, sig: i32) {
        let terminal = self.terminal.filter(|t| t.foreground() == self.own_pgrp);
        if let (true, Some(t)) = (matches!(sig, libc::SIGTTIN | libc::SIGTTOU), terminal) {
            // The job wants the terminal, which `run`'s group has: it gets it.
            t.give_to(self.pid);
            self.job_has_terminal = true;
            self.signal(libc::SIGCONT);
            return;
        }
        if let Some(t) = self.terminal.filter(|t| t.foreground() == self.pid) {
            t.give_to(self.own_pgrp);
        }
        let sig = if sig == libc::SIGSTOP { libc::SIGTSTP } else { sig };
        signals::stop_own_group(sig);
        self.continued();
    }

    fn end(&mut self, ended: Ended) {
        self.ended = Some((ended, Instant::now()));
        self.kill_due = None;
        // The shell takes its terminal back when `run` ends; the job's background
        // processes, like a plain job's, no longer have it.
        if let Some(t) = self.terminal.filter(|t| t.foreground() == self.pid) {
            t.give_to(self.own_pgrp);
        }
    }

    /// Kills a job that outlived SIGTERM by `KILL_AFTER`.
    pub fn tick(&mut self) {
        if self.kill_due.is_some_and(|due| Instant::now() >= due) && !self.kill_sent {
            self.end_with(libc::SIGKILL);
            self.kill_sent = true;
        }
    }

    pub fn ended(&self) -> Option<Ended> {
        self.ended.map(|(e, _)| e)
    }

    /// Whether to stop waiting for the output of processes the job left running: only
    /// once `run` was asked to end the job, and `KILL_AFTER` after the job ended.
    pub fn gives_up_on_output(&self) -> bool {
        match (self.ended, self.asked_to_end) {
            (Some((_, at)), Some(_)) => at.elapsed() >= KILL_AFTER,
            _ => false,
        }
    }

    /// The signal `run` should end by: the job died of the interrupt `run` itself passed
    /// on, and a shell waiting for `run` needs to see that to stop a loop of commands.
    pub fn die_of(&self) -> Option<i32> {
        match (self.ended(), self.interrupted_by) {
            (Some(Ended::Signaled(s)), Some(i)) if s == i => Some(s),
            _ => None,
        }
    }
}

/// Stops `run` alone with `sig`'s default action (the kernel's rules for orphaned groups
/// apply); returns once continued.
fn stop_self(sig: i32) {
    // SAFETY: swaps a disposition for the moment of a raise and restores it.
    unsafe {
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        let mut old: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(sig, &default, &mut old) == 0 {
            libc::raise(sig);
            libc::sigaction(sig, &old, std::ptr::null_mut());
        }
    }
}
