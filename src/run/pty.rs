//! A pseudo-terminal for the child's output that goes to a terminal, so that progress
//! bars, colours and line buffering behave as they would without assertscope.

use nix::pty::{openpty, OpenptyResult, Winsize};
use nix::sys::termios::{tcgetattr, tcsetattr, OutputFlags, SetArg};
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

pub struct Pty {
    /// The side assertscope reads the child's output from.
    pub master: File,
    /// The side the child writes to.
    pub slave: OwnedFd,
}

nix::ioctl_read_bad!(get_winsize, libc::TIOCGWINSZ, Winsize);
nix::ioctl_write_ptr_bad!(set_winsize, libc::TIOCSWINSZ, Winsize);

/// Opens a pty the size of the user's terminal `terminal`.
///
/// The pty does no output processing: the user's terminal already turns `\n` into
/// `\r\n`, and doing it twice would put `\r\r\n` into every captured log.
pub fn open(terminal: BorrowedFd<'_>) -> anyhow::Result<Pty> {
    let size = terminal_size(terminal);
    let OpenptyResult { master, slave } = openpty(size.as_ref(), None)?;
    let mut modes = tcgetattr(&slave)?;
    modes.output_flags.remove(OutputFlags::OPOST);
    tcsetattr(&slave, SetArg::TCSANOW, &modes)?;
    Ok(Pty { master: File::from(master), slave })
}

fn terminal_size(terminal: BorrowedFd<'_>) -> Option<Winsize> {
    let mut ws = Winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: TIOCGWINSZ writes one Winsize into the pointer it is given.
    let ok = unsafe { get_winsize(terminal.as_raw_fd(), &mut ws) }.is_ok();
    (ok && ws.ws_col > 0).then_some(ws)
}

/// The size of a terminal (rows, columns, and pixels), to notice a resize.
pub fn size_of(terminal: BorrowedFd<'_>) -> Option<(u16, u16, u16, u16)> {
    terminal_size(terminal).map(|ws| (ws.ws_row, ws.ws_col, ws.ws_xpixel, ws.ws_ypixel))
}

/// Copies the user's terminal size to the pty (after a resize).
pub fn resize_to(master: &File, terminal: BorrowedFd<'_>) {
    if let Some(ws) = terminal_size(terminal) {
        // SAFETY: TIOCSWINSZ reads one Winsize from the pointer it is given.
        let _ = unsafe { set_winsize(master.as_fd().as_raw_fd(), &ws) };
    }
}
