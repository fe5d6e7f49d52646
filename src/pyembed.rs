//! The Python package, embedded in the binary (see build.rs), and its materialisation
//! into a private directory that `run` and `scan` put on the child's PYTHONPATH.

use anyhow::Context;
use std::path::{Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/python_files.rs"));

/// The `sitecustomize` placed first on the child's PYTHONPATH: it notes that a Python
/// process started, then hands over to the package's start-up hook.
const SITECUSTOMIZE_SHIM: &str = r#"# Written by `assertscope run`: switch the guard on in this Python process.
import os as _os

_d = _os.environ.get("ASSERTSCOPE_REPORT_DIR")
if _d:
    try:
        with open(_os.path.join(_d, "python-processes"), "a") as _f:
            _f.write("%d\n" % _os.getpid())
    except OSError:
        pass
del _d, _os
import assertscope._inject.sitecustomize  # noqa: E402,F401
"#;

/// A directory holding `assertscope/…` (the embedded package), removed on drop.
pub struct Materialized {
    dir: PathBuf,
}

impl Materialized {
    /// Writes the embedded package into a fresh private temporary directory.
    pub fn create() -> anyhow::Result<Materialized> {
        let base = scratch_base();
        let dir =
            unique_dir(&base).context("creating a temporary directory for the injected Python package")?;
        let this = Materialized { dir };
        for (rel, text) in FILES {
            let path = this.dir.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
            }
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
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
        let path = self.dir.join("sitecustomize.py");
        std::fs::write(&path, SITECUSTOMIZE_SHIM).with_context(|| format!("writing {}", path.display()))
    }

    /// PYTHONPATH for a child: this directory first, then whatever the user had.
    pub fn pythonpath(&self) -> std::ffi::OsString {
        let mut pythonpath = std::ffi::OsString::from(&self.dir);
        if let Some(existing) = std::env::var_os("PYTHONPATH").filter(|p| !p.is_empty()) {
            pythonpath.push(if cfg!(windows) { ";" } else { ":" });
            pythonpath.push(existing);
        }
        pythonpath
    }
}

impl Drop for Materialized {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Where the package goes: `ASSERTSCOPE_TMPDIR` if set, else `/dev/shm` where it is a
/// writable memory file system (creating and removing a few dozen files there costs
/// microseconds, on a busy disk tens of milliseconds), else the system temporary directory.
fn scratch_base() -> PathBuf {
    if let Some(dir) = std::env::var_os(crate::contract::env::TMPDIR).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let shm = Path::new("/dev/shm");
    if cfg!(target_os = "linux") && is_writable_dir(shm) {
        return shm.to_path_buf();
    }
    std::env::temp_dir()
}

fn is_writable_dir(dir: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else { return false };
        // SAFETY: access(2) only reads the NUL-terminated path.
        dir.is_dir() && unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } == 0
    }
    #[cfg(not(unix))]
    {
        dir.is_dir()
    }
}

fn unique_dir(base: &Path) -> std::io::Result<PathBuf> {
    let pid = std::process::id();
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    for attempt in 0..100u32 {
        let dir = base.join(format!("assertscope-{pid}-{nanos:x}-{attempt}"));
        match std::fs::create_dir(&dir) {
            Ok(()) => {
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
                }
                return Ok(dir);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "no free temporary directory name"))
}
