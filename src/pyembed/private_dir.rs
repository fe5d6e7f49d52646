//! Private directories in a shared temporary directory (`/dev/shm`, `/tmp`), safe against
//! other local users: created at once with mode 0700 under an unpredictable name,
//! checked to be ours, files in them created with `O_EXCL | O_NOFOLLOW`; their locks
//! (held shared by every process that uses one); and removal of those that runs killed
//! with SIGKILL could not remove themselves, once nothing uses them.

use anyhow::Context;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

const PREFIX: &str = "assertscope-";

/// Creates `BASE/assertscope-HOST-PID-RANDOM` with mode 0700 in one `mkdir`, so that no
/// other user ever has a moment in which to plant a file or a symlink in it.
pub fn create(base: &Path) -> std::io::Result<PathBuf> {
    let host = host_name();
    let pid = std::process::id();
    for _ in 0..100 {
        let dir = base.join(format!("{PREFIX}{host}-{pid}-{:016x}", random_u64()?));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {
                verify_private(&dir)?;
                return Ok(dir);
            }
            // Someone else's file or symlink under the name we drew: draw another.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "no free name for a private directory"))
}

/// The directory is a real directory (not a symlink), owned by us, that nobody else
/// can enter.
fn verify_private(dir: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(dir)?;
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    if !meta.file_type().is_dir() || meta.uid() != me || meta.mode() & 0o077 != 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{} is not a directory of ours that only we can enter", dir.display()),
        ));
    }
    Ok(())
}

/// Creates the directories between `root` (private, existing) and `dir`, each 0700.
pub fn create_parents(root: &Path, dir: &Path) -> anyhow::Result<()> {
    let rel = dir.strip_prefix(root).unwrap_or(dir);
    let mut path = root.to_path_buf();
    for part in rel.components() {
        path.push(part);
        match std::fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && is_real_dir(&path) => {}
            Err(e) => return Err(e).with_context(|| format!("creating {}", path.display())),
        }
    }
    Ok(())
}

fn is_real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_dir())
}

/// Writes a file that must not exist yet; a symlink in its place is an error, never followed.
pub fn write_new(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut file = create_new(path).with_context(|| format!("creating {}", path.display()))?;
    file.write_all(bytes).with_context(|| format!("writing {}", path.display()))
}

/// Opens a new file for writing with `O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600.
pub fn create_new(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Opens `dir` and takes a shared lock on it, held for as long as the returned file (or
/// any copy of its descriptor in a child) stays open.
pub fn lock_shared(dir: &Path) -> std::io::Result<std::fs::File> {
    let file = open_dir(dir)?;
    flock(&file, libc::LOCK_SH)?;
    Ok(file)
}

fn open_dir(dir: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(dir)
}

fn flock(file: &std::fs::File, operation: libc::c_int) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(file.as_raw_fd(), operation) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Removes `dir` if no process holds its lock; returns whether it did. The exclusive lock
/// is held while removing, so no process of the job can take the lock meanwhile.
pub fn remove_unless_in_use(dir: &Path) -> bool {
    let Ok(file) = open_dir(dir) else { return false };
    if flock(&file, libc::LOCK_EX | libc::LOCK_NB).is_err() {
        return false;
    }
    // remove_dir_all does not follow symlinks inside the directory.
    std::fs::remove_dir_all(dir).is_ok()
}

/// Removes the private directories of runs on this host that are no longer alive (a
/// `run` killed with SIGKILL cannot remove its own) and that no process uses any more:
/// none holds the lock, and (on Linux) none was started with the directory in its
/// environment (a shell of the job that lost the lock's descriptor may still start a
/// Python process). Only directories that are ours, named as we name them; errors are
/// ignored, as this is tidying.
pub fn remove_stale(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else { return };
    let host = host_name();
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    let mut stale = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| pid_in_name(n, &host)) else { continue };
        if pid == std::process::id() || process_exists(pid) {
            continue;
        }
        let path = entry.path();
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_dir() && m.uid() == me) {
            stale.push(path);
        }
    }
    if stale.is_empty() {
        return;
    }
    let named = named_in_environments(&stale);
    for path in stale.iter().filter(|p| !named.contains(p)) {
        remove_unless_in_use(path);
    }
}

/// Those of `dirs` that the environment of some process of ours names.
#[cfg(target_os = "linux")]
fn named_in_environments(dirs: &[PathBuf]) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let Ok(procs) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut named = Vec::new();
    for entry in procs.flatten() {
        if !entry.file_name().as_bytes().iter().all(u8::is_ascii_digit) {
            continue;
        }
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else { continue };
        for dir in dirs {
            let needle = dir.as_os_str().as_bytes();
            if !named.contains(dir) && memchr::memmem::find(&environ, needle).is_some() {
                named.push(dir.clone());
            }
        }
    }
    named
}

#[cfg(not(target_os = "linux"))]
fn named_in_environments(_dirs: &[PathBuf]) -> Vec<PathBuf> {
    Vec::new()
}

/// The pid in `assertscope-HOST-PID-RANDOM` when HOST is this host.
fn pid_in_name(name: &str, host: &str) -> Option<u32> {
    let rest = name.strip_prefix(PREFIX)?;
    let mut parts = rest.rsplitn(3, '-');
    let random = parts.next()?;
    let pid = parts.next()?;
    let named_host = parts.next()?;
    (random.len() == 16 && random.bytes().all(|b| b.is_ascii_hexdigit()) && named_host == host)
        .then(|| pid.parse().ok())
        .flatten()
}

fn process_exists(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else { return false };
    // Signal 0 checks existence; EPERM means it exists but belongs to someone else.
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
        Ok(()) => true,
        Err(e) => e != nix::errno::Errno::ESRCH,
    }
}

/// This host's name, with only the characters a file name can safely hold.
pub fn host_name() -> String {
    crate::contract::file_name_host(
        &nix::unistd::gethostname().ok().and_then(|h| h.into_string().ok()).unwrap_or_default(),
    )
}

fn random_u64() -> std::io::Result<u64> {
    let mut bytes = [0u8; 8];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(u64::from_le_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_stale_directories_are_parsed_from_the_right() {
        assert_eq!(pid_in_name("assertscope-node-07.x-4242-00000000deadbeef", "node-07.x"), Some(4242));
        assert_eq!(pid_in_name("assertscope-node-07.x-4242-00000000deadbeef", "node-08"), None);
        assert_eq!(pid_in_name("assertscope-node-4242-nothex", "node"), None);
        assert_eq!(pid_in_name("other-node-4242-00000000deadbeef", "node"), None);
    }
}
