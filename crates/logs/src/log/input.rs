//! Opening what `explain` is given, as a log reader: one input is refused when it is a
//! device or binary through and through, memory-mapped when large enough to gain by it,
//! streamed otherwise (UTF-16 decoded on the way); a directory yields its log files; a
//! file's name may say which rank wrote it.

use super::scanner::LogScan;
use super::sniff::{self, Kind};
use anyhow::Context;
use std::fs::File;
use std::io::{self, IsTerminal, Read};
use std::path::{Path, PathBuf};

/// An input that is not text at all: what it looks like.
#[derive(Debug)]
pub struct BinaryInput(pub &'static str);

impl std::fmt::Display for BinaryInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}, not a text log", self.0)
    }
}

impl std::error::Error for BinaryInput {}

/// Standard input, streamed.
pub fn scan_stdin() -> anyhow::Result<LogScan> {
    scan_reader(io::stdin().lock(), "-", None).context("<stdin>")
}

/// A block or character device (`/dev/zero`); Windows has no such files to name.
#[cfg(unix)]
fn is_device(kind: &std::fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    kind.is_block_device() || kind.is_char_device()
}

#[cfg(not(unix))]
fn is_device(_: &std::fs::FileType) -> bool {
    false
}

/// One file: refused when it is a device or binary ([`BinaryInput`]), mapped when large,
/// else streamed; UTF-16 is decoded.
pub fn scan_file(path: &Path, rank: Option<u32>) -> anyhow::Result<LogScan> {
    let file = File::open(path).with_context(|| format!("{}", path.display()))?;
    // A device never ends (/dev/zero) and holds no log; a FIFO or a terminal may.
    let kind = file.metadata().with_context(|| format!("{}", path.display()))?.file_type();
    if is_device(&kind) && !file.is_terminal() {
        anyhow::bail!("{}: a device, not a log file (pipe a log in, or name the file)", path.display());
    }
    let name = path.display().to_string();
    if let Some(scan) = scan_mapped_file(&file, &name, rank).with_context(|| name.clone())? {
        return Ok(scan);
    }
    scan_reader(file, &name, rank).with_context(|| name)
}

/// Files smaller than this are streamed: mapping and splitting them costs more than it saves.
const MIN_MAPPED: u64 = 4 << 20;

/// A large regular file, scanned through a memory map with the prefilter on every core;
/// `None` when it is better streamed (small, not a regular file, not mappable, UTF-16, or
/// with a line too long for the mapped reader).
fn scan_mapped_file(file: &File, name: &str, rank: Option<u32>) -> anyhow::Result<Option<LogScan>> {
    let meta = file.metadata()?;
    if !meta.is_file() || meta.len() < MIN_MAPPED {
        return Ok(None);
    }
    // SAFETY: the mapping is read-only. A file truncated by another process while it is
    // read is the one hazard, as for every reader that maps (ripgrep included); a log
    // that is still being appended to is read up to its length at this moment.
    let Ok(map) = (unsafe { memmap2::Mmap::map(file) }) else { return Ok(None) };
    match sniff::kind(&map[..map.len().min(sniff::HEAD)]) {
        Kind::Binary(what) => Err(BinaryInput(what).into()),
        Kind::Utf16 { .. } => Ok(None),
        Kind::Text => Ok(super::scan_mapped(&map, name, rank).transpose()?),
    }
}

fn scan_reader<R: Read>(mut reader: R, name: &str, rank: Option<u32>) -> anyhow::Result<LogScan> {
    // Look at the start to refuse a file that is no text at all, and to find UTF-16.
    let mut head = vec![0u8; sniff::HEAD];
    let mut filled = 0;
    while filled < head.len() {
        match reader.read(&mut head[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        }
    }
    head.truncate(filled);
    match sniff::kind(&head) {
        Kind::Binary(what) => Err(BinaryInput(what).into()),
        Kind::Utf16 { big_endian } => {
            let utf16 = io::Cursor::new(head).chain(reader);
            let mut utf16 = sniff::Utf16Reader::new(utf16, big_endian);
            let mut bom = [0u8; 3];
            utf16.read_exact(&mut bom)?;
            Ok(super::scan(utf16, name, rank)?)
        }
        Kind::Text => Ok(super::scan(io::Cursor::new(head).chain(reader), name, rank)?),
    }
}

/// Log files under a directory, sorted (torchrun `--log-dir`, Slurm output directories).
/// A subdirectory or entry that cannot be listed is passed over, its error kept in `problems`.
pub fn log_files_in(dir: &Path, problems: &mut Vec<anyhow::Error>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(entries) => entries,
            Err(e) => {
                problems.push(anyhow::Error::new(e).context(d.display().to_string()));
                continue;
            }
        };
        for entry in entries {
            let Ok(entry) =
                entry.map_err(|e| problems.push(anyhow::Error::new(e).context(d.display().to_string())))
            else {
                continue;
            };
            let path = entry.path();
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            match entry.file_type() {
                Ok(ft) if ft.is_dir() => stack.push(path),
                Ok(ft) if ft.is_file() => out.push(path),
                Ok(_) => {}
                Err(e) => problems.push(anyhow::Error::new(e).context(path.display().to_string())),
            }
        }
    }
    out.sort();
    out
}

/// The rank of each file: from its own name where it says so, else, for a set of files
/// named alike (Slurm's `job-%j_%t.out`), from the one number that differs between them.
pub fn ranks_of(files: &[&Path]) -> Vec<Option<u32>> {
    let named: Vec<Option<u32>> = files.iter().map(|f| rank_from_path(f)).collect();
    if named.iter().any(Option::is_some) || files.len() < 2 {
        return named;
    }
    let shapes: Vec<(String, Vec<u64>)> = files.iter().map(|f| number_skeleton(f)).collect();
    let (skeleton, numbers) = &shapes[0];
    if numbers.is_empty() || shapes.iter().any(|(s, n)| s != skeleton || n.len() != numbers.len()) {
        return named;
    }
    let varying: Vec<usize> =
        (0..numbers.len()).filter(|&i| shapes.iter().any(|(_, n)| n[i] != numbers[i])).collect();
    match varying.as_slice() {
        [i] => shapes.iter().map(|(_, n)| u32::try_from(n[*i]).ok()).collect(),
        _ => named,
    }
}

/// A file name with its digit runs taken out: `slurm-4411_3.out` -> (`slurm-#_#.out`, [4411, 3]).
fn number_skeleton(path: &Path) -> (String, Vec<u64>) {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut skeleton = String::new();
    let mut numbers = Vec::new();
    let mut digits = String::new();
    for c in name.chars().chain(std::iter::once('\0')) {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        if !digits.is_empty() {
            numbers.push(digits.parse().unwrap_or(u64::MAX));
            skeleton.push('#');
            digits.clear();
        }
        if c != '\0' {
            skeleton.push(c);
        }
    }
    (skeleton, numbers)
}

/// The rank a per-rank log file belongs to, from its name: `rank3.log`, `rank_3.txt`,
/// torchrun's `--log-dir` layout `…/attempt_0/3/stderr.log`, `task-3.out`, `worker3.log`.
pub fn rank_from_path(path: &Path) -> Option<u32> {
    // A Ray worker's file names a worker id and a pid, never a rank (see log::ray_session).
    if super::ray_session::WorkerFile::of(path).is_some() {
        return None;
    }
    let stem = path.file_stem()?.to_string_lossy().to_ascii_lowercase();
    for key in ["rank", "task", "worker", "proc", "process"] {
        if let Some(i) = stem.rfind(key) {
            let digits: String = stem[i + key.len()..]
                .trim_start_matches(['_', '-', '.'])
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(n) = digits.parse() {
                return Some(n);
            }
        }
    }
    if matches!(stem.as_str(), "stdout" | "stderr" | "error" | "output") {
        let parent = path.parent()?.file_name()?.to_string_lossy();
        return parent.parse().ok();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_from_file_names() {
        for (p, want) in [
            ("logs/rank3.log", Some(3)),
            ("logs/rank_12.txt", Some(12)),
            ("run/attempt_0/2/stderr.log", Some(2)),
            ("slurm-task-5.out", Some(5)),
            ("train.log", None),
            ("logs/stdout.log", None),
        ] {
            assert_eq!(rank_from_path(Path::new(p)), want, "{p}");
        }
    }

    #[test]
    fn ranks_from_the_number_that_differs() {
        let files = ["out/slurm-4411_0.out", "out/slurm-4411_1.out", "out/slurm-4411_12.out"];
        let paths: Vec<&Path> = files.iter().map(Path::new).collect();
        assert_eq!(ranks_of(&paths), vec![Some(0), Some(1), Some(12)]);
        let unrelated: Vec<&Path> = ["a/train_v2.log", "b/eval_v3.log"].iter().map(Path::new).collect();
        assert_eq!(ranks_of(&unrelated), vec![None, None]);
        let single: Vec<&Path> = ["exp_2024_05.log"].iter().map(Path::new).collect();
        assert_eq!(ranks_of(&single), vec![None]);
    }
}
