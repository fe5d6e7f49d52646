//! `assertscope explain`: a crash log (a file, several per-rank files, a directory of
//! them, or stdin) to its root cause, the user's line and the fix.

use crate::diagnose;
use crate::guard_report::{self, GuardReport};
use crate::log::sniff::{self, Kind};
use crate::log::{self, LogScan};
use crate::render::{self, style::ColorChoice, style::Palette};
use crate::report::Report;
use anyhow::Context;
use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  assertscope explain train.log\n  python train.py 2>&1 | assertscope explain\n  assertscope explain logs/rank*.txt --json\n  assertscope explain torchrun-logs/"
)]
pub struct ExplainArgs {
    /// Log files, or directories of per-rank logs; `-` (or nothing, when piped) reads stdin
    pub inputs: Vec<PathBuf>,
    /// Print one assertscope.diagnosis/1 JSON object
    #[arg(long)]
    pub json: bool,
    /// When to use colours
    #[arg(long, value_enum, default_value_t)]
    pub color: ColorChoice,
}

pub fn execute(args: ExplainArgs) -> anyhow::Result<u8> {
    let Inputs { scans, reports, unreadable } = read_inputs(&args.inputs)?;
    if scans.is_empty() && reports.is_empty() && unreadable > 0 {
        // Every input was unreadable, and each has had its line: nothing to diagnose.
        return Ok(crate::exit::USAGE);
    }
    let report = diagnose::diagnose_job(&scans, &reports);
    let subject = if scans.len() + reports.len() == 1 { "the log" } else { "the logs" };
    print_report(&report, args.json, args.color, subject)?;
    // As ripgrep does: what could be read is reported, and an input that could not be
    // read makes the status 2, since the diagnosis may lack what it held.
    Ok(if unreadable > 0 { crate::exit::USAGE } else { exit_status(&report) })
}

/// 0 when a diagnosis names a problem, 1 when there is none.
pub fn exit_status(report: &Report) -> u8 {
    if report.found_problem() {
        crate::exit::DIAGNOSED
    } else {
        crate::exit::NO_ERROR_FOUND
    }
}

pub fn print_report(report: &Report, json: bool, color: ColorChoice, subject: &str) -> anyhow::Result<()> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let written = if json {
        render::json::write_report(&mut out, report)
    } else {
        let palette = Palette::new(color.for_stdout());
        out.write_all(render::human::render(report, &palette, subject).as_bytes())
    };
    match written {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing the report"),
    }
}

/// What the inputs hold: logs, and the guard's reports of a `run --report-dir` job.
pub struct Inputs {
    pub scans: Vec<LogScan>,
    pub reports: Vec<GuardReport>,
    /// Inputs that could not be read, each already reported on stderr in one line.
    pub unreadable: usize,
}

/// Reads every input; directories contribute every log file and guard report below them.
/// An input that cannot be read is reported on stderr in one line, and the others are
/// still read (as ripgrep goes on past a file it cannot open).
pub fn read_inputs(inputs: &[PathBuf]) -> anyhow::Result<Inputs> {
    let mut out = Inputs { scans: Vec::new(), reports: Vec::new(), unreadable: 0 };
    if inputs.is_empty() {
        if io::stdin().is_terminal() {
            anyhow::bail!(
                "no log given: pass a log file or directory, or pipe one in (python train.py 2>&1 | assertscope explain)"
            );
        }
        out.scans.push(scan_stdin()?);
        return Ok(out);
    }
    let mut files: Vec<(PathBuf, bool)> = Vec::new();
    for input in inputs {
        if input.as_os_str() == "-" {
            match scan_stdin() {
                Ok(scan) => out.scans.push(scan),
                Err(e) => out.unreadable(&e),
            }
            continue;
        }
        match std::fs::metadata(input) {
            Err(e) => out.unreadable(&anyhow::Error::new(e).context(input.display().to_string())),
            Ok(meta) if meta.is_dir() => {
                let found = match log::ray_session::log_files(input) {
                    Ok(Some(files)) => files,
                    Ok(None) => log_files_in(input, &mut out),
                    Err(e) => {
                        out.unreadable(&anyhow::Error::new(e).context(input.display().to_string()));
                        Vec::new()
                    }
                };
                if found.is_empty() {
                    out.unreadable(&anyhow::anyhow!("{}: the directory holds no log files", input.display()));
                }
                files.extend(found.into_iter().map(|f| (f, true)));
            }
            Ok(_) => files.push((input.clone(), false)),
        }
    }
    let ranks = ranks_of(&files.iter().map(|(f, _)| f.as_path()).collect::<Vec<_>>());
    let mut logs_in_dirs = 0;
    for ((file, in_dir), rank) in files.iter().zip(ranks) {
        if guard_report::is_report_file(file) {
            match read_guard_report(file) {
                Ok(report) => out.reports.push(report),
                Err(e) => out.unreadable(&e),
            }
            continue;
        }
        // Inside a directory, skip what is not a log (core dumps, checkpoints, JSON), and
        // say so: a log that was skipped silently would look like a rank that said nothing.
        if *in_dir && file.extension().is_some_and(|e| e == "json") {
            skipped(file, "JSON, not a log (guard reports are read when named guard-*.json)");
            continue;
        }
        match scan_file(file, rank) {
            Ok(scan) => {
                logs_in_dirs += usize::from(*in_dir);
                out.scans.push(scan)
            }
            Err(e) if *in_dir && e.downcast_ref::<BinaryInput>().is_some() => {
                skipped(file, &e.root_cause().to_string())
            }
            Err(e) => out.unreadable(&e),
        }
    }
    if logs_in_dirs == 0
        && files.iter().any(|(_, in_dir)| *in_dir)
        && out.scans.is_empty()
        && out.reports.is_empty()
    {
        out.unreadable(&anyhow::anyhow!(
            "no text log in the directories given: every file there was skipped"
        ));
    }
    log::ray_session::assign_ranks(&mut out.scans);
    Ok(out)
}

impl Inputs {
    fn unreadable(&mut self, err: &anyhow::Error) {
        crate::render::style::print_error(err);
        self.unreadable += 1;
    }
}

fn read_guard_report(file: &Path) -> anyhow::Result<GuardReport> {
    let text = std::fs::read_to_string(file).with_context(|| format!("{}", file.display()))?;
    GuardReport::parse(&text).with_context(|| format!("{}: not a guard report", file.display()))
}

fn skipped(file: &Path, why: &str) {
    eprintln!("assertscope: skipped {}: {why}", file.display());
}

/// An input that is not text at all: what it looks like.
#[derive(Debug)]
struct BinaryInput(&'static str);

impl std::fmt::Display for BinaryInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}, not a text log", self.0)
    }
}

impl std::error::Error for BinaryInput {}

fn scan_stdin() -> anyhow::Result<LogScan> {
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

fn scan_file(path: &Path, rank: Option<u32>) -> anyhow::Result<LogScan> {
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
        Kind::Text => Ok(log::scan_mapped(&map, name, rank).transpose()?),
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
            Ok(log::scan(utf16, name, rank)?)
        }
        Kind::Text => Ok(log::scan(io::Cursor::new(head).chain(reader), name, rank)?),
    }
}

/// Log files under a directory, sorted (torchrun `--log-dir`, Slurm output directories).
/// A subdirectory that cannot be listed is reported and passed over.
fn log_files_in(dir: &Path, inputs: &mut Inputs) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(entries) => entries,
            Err(e) => {
                inputs.unreadable(&anyhow::Error::new(e).context(d.display().to_string()));
                continue;
            }
        };
        for entry in entries {
            let Ok(entry) =
                entry.map_err(|e| inputs.unreadable(&anyhow::Error::new(e).context(d.display().to_string())))
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
                Err(e) => inputs.unreadable(&anyhow::Error::new(e).context(path.display().to_string())),
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
    if log::ray_session::WorkerFile::of(path).is_some() {
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
