//! The Python package, embedded in the binary (see build.rs), and its materialisation
//! into a private directory that `run` and `scan` put on the child's PYTHONPATH.

use anyhow::Context;
use std::path::{Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/python_files.rs"));

pub mod private_dir;

/// The `sitecustomize` placed first on the child's PYTHONPATH: it tells `run` that this
/// Python process loaded it, and whether the guard is on in it (in the private directory
/// it lives in, never in a shared one; again in each forked child), holds the directory's
/// lock for as long as the process lives (see [`Materialized`]), then hands over to the
/// package's start-up hook.
const SITECUSTOMIZE_SHIM: &str = r#"# Written by `assertscope run`: switch the guard on in this Python process.
import os as _os

_assertscope_here = _os.path.dirname(_os.path.abspath(__file__))


def _assertscope_announce(_os=_os, _here=_assertscope_here):
    try:
        _on = any(
            _os.environ.get(_name, "").strip().lower() in ("1", "true", "yes", "on")
            for _name in ("{GUARD}", "{CPU}")
        )
        _fd = _os.open(
            _os.path.join(_here, "{PYTHON_PROCESSES}"),
            _os.O_WRONLY | _os.O_APPEND | _os.O_CREAT | getattr(_os, "O_NOFOLLOW", 0),
            0o600,
        )
        try:
            _os.write(_fd, b"%d %s\n" % (_os.getpid(), b"on" if _on else b"off"))
        finally:
            _os.close(_fd)
    except OSError:
        pass


_assertscope_announce()
if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(after_in_child=_assertscope_announce)
try:
    import fcntl as _fcntl

    _assertscope_lock = _os.open(_assertscope_here, _os.O_RDONLY)
    _fcntl.flock(_assertscope_lock, _fcntl.LOCK_SH)
except (ImportError, OSError):
    pass
import assertscope._inject.sitecustomize  # noqa: E402,F401
"#;

/// The file in which the shim lists the Python processes it ran in: one line each, the
/// pid and `on` or `off` (the guard's variables were removed from its environment).
pub const PYTHON_PROCESSES: &str = "python-processes";

/// A directory holding `assertscope/…` (the embedded package), removed on drop once no
/// process uses it any more.
///
/// Another local user must never be able to put code in it: it is created by one
/// `mkdir(…, 0700)` under an unpredictable name (no window in which it is accessible),
/// checked to be ours before anything is written, and every file in it is created with
/// `O_EXCL | O_NOFOLLOW`.
///
/// It lives as long as any process of the job: a shared lock on it (`flock`) is held by
/// this process, by the job, which inherits the descriptor ([`Materialized::lock_fd`]), and
/// by every Python process that loaded the start-up hook. It is removed only when an
/// exclusive lock can be taken, by this process as it ends or by a later run tidying up
/// after one that was killed (`private_dir::remove_stale`), so a job left running by a
/// killed `run` keeps its guard in every Python process it starts.
pub struct Materialized {
    dir: PathBuf,
    /// Closed (never unlocked: the job shares this open file) before the removal.
    lock: Option<std::fs::File>,
    /// Left in place: processes of the job live on.
    kept: bool,
}

impl Materialized {
    /// Writes the embedded package into a fresh private temporary directory, after
    /// removing those that runs which died without cleaning up left behind.
    pub fn create() -> anyhow::Result<Materialized> {
        let base = scratch_base()?;
        check_base(&base)?;
        private_dir::remove_stale(&base);
        let dir = private_dir::create(&base).with_context(|| {
            format!("{}: cannot create a private directory for the injected Python package", base.display())
        })?;
        let lock = private_dir::lock_shared(&dir)
            .with_context(|| format!("{}: cannot lock the private directory", dir.display()))?;
        let this = Materialized { dir, lock: Some(lock), kept: false };
        for (rel, text) in FILES {
            let path = this.dir.join(rel);
            if let Some(parent) = path.parent() {
                private_dir::create_parents(&this.dir, parent)?;
            }
            private_dir::write_new(&path, text.as_bytes())?;
        }
        Ok(this)
    }

    /// The directory to put on PYTHONPATH (it contains the `assertscope` package).
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Puts the start-up hook (a `sitecustomize`) beside the package, so that every Python
    /// process with this directory on its PYTHONPATH arms the guard as it starts.
    pub fn install_start_up_hook(&self) -> anyhow::Result<()> {
        use crate::contract::env;
        let shim = SITECUSTOMIZE_SHIM
            .replace("{GUARD}", env::GUARD)
            .replace("{CPU}", env::CPU)
            .replace("{PYTHON_PROCESSES}", PYTHON_PROCESSES);
        private_dir::write_new(&self.dir.join("sitecustomize.py"), shim.as_bytes())
    }

    /// The descriptor holding the directory's shared lock, for a child to inherit.
    pub fn lock_fd(&self) -> Option<std::os::fd::RawFd> {
        self.lock.as_ref().map(std::os::fd::AsRawFd::as_raw_fd)
    }

    /// Leaves the directory in place when this is dropped: processes of the job live on
    /// (a later run removes it once none does).
    pub fn keep(&mut self) {
        self.kept = true;
    }

    /// The file the start-up hook lists the Python processes it ran in.
    pub fn announcements(&self) -> PathBuf {
        self.dir.join(PYTHON_PROCESSES)
    }

    /// PYTHONPATH for a child: this directory first, then whatever the user had.
    pub fn pythonpath(&self) -> std::ffi::OsString {
        let mut pythonpath = std::ffi::OsString::from(&self.dir);
        if let Some(existing) = std::env::var_os("PYTHONPATH").filter(|p| !p.is_empty()) {
            pythonpath.push(":");
            pythonpath.push(existing);
        }
        pythonpath
    }

    /// How many Python processes the start-up hook ran in.
    pub fn python_processes(&self) -> usize {
        std::fs::read_to_string(self.dir.join(PYTHON_PROCESSES))
            .map(|s| s.lines().filter(|l| l.split_ascii_whitespace().nth(1) != Some("off")).count())
            .unwrap_or(0)
    }
}

impl Drop for Materialized {
    fn drop(&mut self) {
        drop(self.lock.take());
        if !self.kept {
            private_dir::remove_unless_in_use(&self.dir);
        }
    }
}

/// Where the package goes: `ASSERTSCOPE_TMPDIR` if set (made absolute, as the child may
/// change directory), else `/dev/shm` where it is a writable memory file system (creating
/// and removing a few dozen files there costs microseconds, on a busy disk tens of
/// milliseconds), else the system temporary directory.
fn scratch_base() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os(crate::contract::env::TMPDIR).filter(|d| !d.is_empty()) {
        return std::path::absolute(&dir).with_context(|| {
            format!("ASSERTSCOPE_TMPDIR={}: cannot make it absolute", Path::new(&dir).display())
        });
    }
    let shm = Path::new("/dev/shm");
    if cfg!(target_os = "linux") && is_writable_dir(shm) {
        return Ok(shm.to_path_buf());
    }
    Ok(std::env::temp_dir())
}

/// A directory others can write to must have the sticky bit (as /tmp and /dev/shm do):
/// without it they could rename our private directory away and put theirs in its place.
fn check_base(base: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(base)
        .with_context(|| format!("{}: cannot use it as the temporary directory", base.display()))?;
    anyhow::ensure!(meta.is_dir(), "{}: not a directory (set ASSERTSCOPE_TMPDIR to one)", base.display());
    let mode = meta.permissions().mode();
    anyhow::ensure!(
        mode & 0o022 == 0 || mode & 0o1000 != 0,
        "{}: others can write to it and it has no sticky bit, so a private directory in it could be swapped \
         (use a directory only you can write to: set ASSERTSCOPE_TMPDIR)",
        base.display()
    );
    Ok(())
}

fn is_writable_dir(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else { return false };
    // SAFETY: access(2) only reads the NUL-terminated path.
    dir.is_dir() && unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } == 0
}
