//! A pseudo-terminal for the child when the user watches a terminal, so that progress
//! bars, colours and line buffering behave as they would without assertscope.

use nix::pty::{openpty, OpenptyResult, Winsize};
use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd};

pub struct Pty {
    /// The side assertscope reads the child's output from.
    pub master: File,
    /// The side the child writes to (its stdout and stderr).
    pub slave: OwnedFd,
}

nix::ioctl_read_bad!(get_winsize, libc::TIOCGWINSZ, Winsize);
nix::ioctl_write_ptr_bad!(set_winsize, libc::TIOCSWINSZ, Winsize);

/// Opens a pty the size of the user's terminal (stdout's).
pub fn open() -> anyhow::Result<Pty> {
    let size = terminal_size();
    let OpenptyResult { master, slave } = openpty(size.as_ref(), None)?;
    Ok(Pty { master: File::from(master), slave })
}

fn terminal_size() -> Option<Winsize> {
    let mut ws = Winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: TIOCGWINSZ writes one Winsize into the pointer it is given.
    let ok = unsafe { get_winsize(std::io::stdout().as_raw_fd(), &mut ws) }.is_ok();
    (ok && ws.ws_col > 0).then_some(ws)
}

/// Copies the user's terminal size to the pty (after a resize).
pub fn resize_to_terminal(master: &File) {
    if let Some(ws) = terminal_size() {
        // SAFETY: TIOCSWINSZ reads one Winsize from the pointer it is given.
        let _ = unsafe { set_winsize(master.as_raw_fd(), &ws) };
    }
}
