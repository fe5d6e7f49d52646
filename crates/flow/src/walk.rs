//! Python source files on disk: each read whole, refused with one line saying why when it is
//! not a regular file, too large or not UTF-8 text; and the Python files of a project,
//! found as ripgrep finds files (`.gitignore`, `.ignore` and hidden files honoured).

use std::path::Path;

/// A path that could not be read as Python source, and why.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Unreadable {
    pub path: String,
    pub message: String,
}

/// The largest source file read. Real source files stay far below it; past it the input
/// is generated data or not Python at all, and reading it whole would only exhaust memory.
pub const MAX_FILE_BYTES: u64 = 32 << 20;

/// Reads a regular file of at most [`MAX_FILE_BYTES`] as UTF-8 text. Devices, FIFOs and
/// sockets (`lint /dev/zero`) are refused before reading: they may never end. `reader`
/// names who reads, in the message for a file too large (`lint`).
pub fn read_source(path: &Path, reader: &str) -> Result<String, Unreadable> {
    use std::io::Read;
    let fail = |message: String| Unreadable { path: display(path), message };
    let file = std::fs::File::open(path).map_err(|err| fail(describe_io(&err)))?;
    let metadata = file.metadata().map_err(|err| fail(describe_io(&err)))?;
    if !metadata.is_file() {
        return Err(fail(format!("not a regular file ({})", kind_of(&metadata))));
    }
    if metadata.len() > MAX_FILE_BYTES {
        return Err(fail(too_large(metadata.len(), reader)));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    // The file may grow while it is read: never take more than the limit allows.
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|err| fail(describe_io(&err)))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(fail(too_large(bytes.len() as u64, reader)));
    }
    String::from_utf8(bytes).map_err(|err| {
        fail(format!("not UTF-8 text (invalid byte at offset {})", err.utf8_error().valid_up_to()))
    })
}

fn too_large(bytes: u64, reader: &str) -> String {
    format!(
        "file too large ({:.1} MiB; {reader} reads Python files up to {} MiB)",
        bytes as f64 / (1u64 << 20) as f64,
        MAX_FILE_BYTES >> 20
    )
}

fn kind_of(metadata: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = metadata.file_type();
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_fifo() {
            return "a named pipe";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if metadata.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

pub fn display(path: &Path) -> String {
    let text = path.to_string_lossy();
    text.strip_prefix("./").unwrap_or(&text).to_string()
}

pub fn describe_io(err: &std::io::Error) -> String {
    match err.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => err.to_string(),
    }
}

/// The Python files under `root`, as ripgrep would find them (`.gitignore`, `.ignore` and
/// hidden files honoured), in a stable order; at most `limit` of them.
pub fn python_files(root: &Path, limit: usize) -> Vec<std::path::PathBuf> {
    let mut files: Vec<std::path::PathBuf> = ignore::WalkBuilder::new(root)
        .require_git(false)
        .max_depth(Some(8))
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| e.into_path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .take(limit)
        .collect();
    files.sort();
    files
}
