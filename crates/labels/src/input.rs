//! Turns the paths, globs and directories on the command line into an ordered list of
//! data files, each with its format.

use anyhow::{bail, Context};
use std::path::{Path, PathBuf};

/// A data file's format. The command line names each by [`Format::name_on_command_line`]
/// and describes it by [`Format::description`]; the crate itself parses no arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Tsv,
    Text,
    Jsonl,
    Parquet,
    Arrow,
    Npy,
    Npz,
    Safetensors,
    Png,
}

impl Format {
    pub const ALL: [Format; 10] = [
        Format::Csv,
        Format::Tsv,
        Format::Text,
        Format::Jsonl,
        Format::Parquet,
        Format::Arrow,
        Format::Npy,
        Format::Npz,
        Format::Safetensors,
        Format::Png,
    ];

    /// The value of `--format` that forces this format.
    pub fn name_on_command_line(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Tsv => "tsv",
            Format::Text => "text",
            Format::Jsonl => "jsonl",
            Format::Parquet => "parquet",
            Format::Arrow => "arrow",
            Format::Npy => "npy",
            Format::Npz => "npz",
            Format::Safetensors => "safetensors",
            Format::Png => "png",
        }
    }

    /// One line of help for `--format`, where the name alone does not say it.
    pub fn description(self) -> Option<&'static str> {
        match self {
            Format::Csv => Some("Comma-separated values (header optional)"),
            Format::Tsv => Some("Tab-separated values"),
            Format::Text => Some("One label per line"),
            Format::Jsonl => Some("JSON Lines: one JSON value or object per line"),
            Format::Arrow => Some("Arrow IPC file or stream (Hugging Face datasets cache files)"),
            Format::Png => Some("PNG segmentation masks (8/16-bit grey or palette)"),
            Format::Parquet | Format::Npy | Format::Npz | Format::Safetensors => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "CSV",
            Format::Tsv => "TSV",
            Format::Text => "text",
            Format::Jsonl => "JSON Lines",
            Format::Parquet => "Parquet",
            Format::Arrow => "Arrow IPC",
            Format::Npy => "NPY",
            Format::Npz => "NPZ",
            Format::Safetensors => "safetensors",
            Format::Png => "PNG",
        }
    }

    /// The format a file name implies, if its extension is a known one.
    pub fn from_extension(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "csv" => Format::Csv,
            "tsv" | "tab" => Format::Tsv,
            "txt" | "labels" | "lst" => Format::Text,
            "jsonl" | "ndjson" => Format::Jsonl,
            "parquet" | "pq" => Format::Parquet,
            "arrow" | "feather" | "ipc" | "arrows" => Format::Arrow,
            "npy" => Format::Npy,
            "npz" => Format::Npz,
            "safetensors" => Format::Safetensors,
            "png" => Format::Png,
            _ => return None,
        })
    }

    /// The format the first bytes of a file reveal, for files without a known extension.
    pub fn sniff(head: &[u8]) -> Option<Format> {
        Some(if head.starts_with(b"PAR1") {
            Format::Parquet
        } else if head.starts_with(b"ARROW1") || head.starts_with(&[0xff, 0xff, 0xff, 0xff]) {
            Format::Arrow
        } else if head.starts_with(b"\x93NUMPY") {
            Format::Npy
        } else if head.starts_with(b"PK\x03\x04") {
            Format::Npz
        } else if head.starts_with(b"\x89PNG\r\n\x1a\n") {
            Format::Png
        } else {
            return None;
        })
    }
}

#[derive(Debug, Clone)]
pub struct InputFile {
    pub path: PathBuf,
    pub format: Format,
}

impl InputFile {
    pub fn display(&self) -> String {
        self.path.display().to_string()
    }
}

/// Expands every argument (a file, a directory of shards, or a glob) in order.
pub fn resolve(args: &[PathBuf], forced: Option<Format>) -> anyhow::Result<Vec<InputFile>> {
    if args.is_empty() {
        bail!("no input: name a data file, a directory or a glob");
    }
    let mut files = Vec::new();
    for path in args {
        let shown = path.display();
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => files.extend(directory(path, forced)?),
            Ok(meta) if meta.is_file() => {
                files.push(InputFile { path: path.to_path_buf(), format: format_of(path, forced)? })
            }
            // A device, FIFO or socket has no size to split by and may never end (/dev/zero).
            Ok(_) => {
                bail!("{shown}: not a regular file (a device, FIFO or socket): copy the data to a file first")
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match path.to_str() {
                Some(pattern) if pattern.contains(['*', '?', '[']) => files.extend(glob(pattern, forced)?),
                _ => bail!("{shown}: no such file or directory"),
            },
            // A symlink loop, a directory on the way that cannot be entered.
            Err(e) => bail!("{shown}: {e}"),
        }
    }
    Ok(files)
}

fn glob(pattern: &str, forced: Option<Format>) -> anyhow::Result<Vec<InputFile>> {
    let paths = glob::glob(pattern).with_context(|| format!("{pattern}: not a valid glob"))?;
    let mut found = Vec::new();
    for entry in paths {
        let path = entry.with_context(|| format!("{pattern}: reading a matching path"))?;
        if path.is_file() {
            found.push(InputFile { format: format_of(&path, forced)?, path });
        }
    }
    if found.is_empty() {
        bail!("{pattern}: no file matches this glob");
    }
    Ok(found)
}

/// Every data file under a directory, sorted by path; the files must share one format.
fn directory(dir: &Path, forced: Option<Format>) -> anyhow::Result<Vec<InputFile>> {
    let mut paths = Vec::new();
    walk(dir, &mut paths).with_context(|| format!("{}: reading the directory", dir.display()))?;
    paths.sort();
    let files: Vec<InputFile> = paths
        .into_iter()
        .filter_map(|path| {
            let format = forced.or_else(|| Format::from_extension(&path))?;
            Some(InputFile { path, format })
        })
        .collect();
    let Some(first) = files.first() else {
        bail!("{}: the directory holds no data file of a known format", dir.display());
    };
    let format = first.format;
    if let Some(other) = files.iter().find(|f| f.format != format) {
        // A Hugging Face `save_to_disk` directory keeps JSON metadata beside its Arrow
        // shards; mixed data formats are ambiguous, though.
        bail!(
            "{}: the directory mixes {} files ({}) and {} files ({}); name the files to check",
            dir.display(),
            format.name(),
            first.path.display(),
            other.format.name(),
            other.path.display()
        );
    }
    Ok(files)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            walk(&path, out)?;
        } else if path.is_file() {
            out.push(path);
        }
    }
    Ok(())
}

fn format_of(path: &Path, forced: Option<Format>) -> anyhow::Result<Format> {
    if let Some(f) = forced.or_else(|| Format::from_extension(path)) {
        return Ok(f);
    }
    let mut head = [0u8; 8];
    let n = {
        use std::io::Read;
        let mut file =
            std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
        file.read(&mut head).with_context(|| format!("{}: cannot read", path.display()))?
    };
    Format::sniff(&head[..n]).ok_or_else(|| {
        anyhow::anyhow!("{}: unknown file format; name it with --format (csv, tsv, text, jsonl, parquet, arrow, npy, npz, safetensors, png)", path.display())
    })
}
