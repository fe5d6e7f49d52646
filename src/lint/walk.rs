//! Violation and linting the files: directories are walked in parallel with the `ignore` crate
//! (as ripgrep does), honouring `.gitignore`, `.ignore` and hidden files; each file is linted
//! on the thread that found it.

use super::{lint_source_with, Selection, Violation};
use assertscope_flow::imports::{FileImports, ImportCache};
use assertscope_flow::walk::{describe_io, display};
pub use assertscope_flow::walk::{Unreadable, MAX_FILE_BYTES};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(Debug, Default)]
pub struct LintRun {
    /// Sorted by path, then position.
    pub findings: Vec<Violation>,
    pub unreadable: Vec<Unreadable>,
    pub files: usize,
    pub lines: usize,
}

/// Lints every Python file under `paths` (a file named directly is linted whatever its extension).
pub fn lint_paths(paths: &[PathBuf], selection: &Selection, threads: usize) -> LintRun {
    let outcome = Mutex::new(LintRun::default());
    let cache = ImportCache::default();
    let mut roots = Vec::new();
    for path in paths {
        match std::fs::metadata(path) {
            Ok(_) => roots.push(path),
            Err(err) => outcome
                .lock()
                .unwrap()
                .unreadable
                .push(Unreadable { path: display(path), message: describe_io(&err) }),
        }
    }
    if let Some((first, rest)) = roots.split_first() {
        let mut builder = ignore::WalkBuilder::new(first);
        for root in rest {
            builder.add(root);
        }
        builder.require_git(false).threads(threads);
        builder.build_parallel().run(|| {
            let outcome = &outcome;
            let cache = &cache;
            Box::new(move |entry| {
                match entry {
                    Ok(entry) => {
                        let named = entry.depth() == 0;
                        let is_file =
                            entry.file_type().is_some_and(|t| t.is_file() || (named && !t.is_dir()));
                        let is_python = entry.path().extension().is_some_and(|e| e == "py");
                        if is_file && (named || is_python) {
                            let result = lint_file(entry.path(), selection, cache);
                            let mut outcome = outcome.lock().unwrap();
                            match result {
                                Ok((findings, lines)) => {
                                    outcome.files += 1;
                                    outcome.lines += lines;
                                    outcome.findings.extend(findings);
                                }
                                Err(unreadable) => outcome.unreadable.push(unreadable),
                            }
                        }
                    }
                    Err(err) => {
                        let path = match &err {
                            ignore::Error::WithPath { path, .. } => display(path),
                            _ => String::new(),
                        };
                        outcome
                            .lock()
                            .unwrap()
                            .unreadable
                            .push(Unreadable { path, message: err.to_string() });
                    }
                }
                ignore::WalkState::Continue
            })
        });
    }
    let mut outcome = outcome.into_inner().unwrap();
    outcome
        .findings
        .sort_by(|a, b| (&a.path, a.line, a.column, a.code).cmp(&(&b.path, b.line, b.column, b.code)));
    outcome.unreadable.sort_by(|a, b| a.path.cmp(&b.path));
    outcome
}

/// Whether a file named on the command line may hold Python: a `.py`, `.pyi` or `.pyw`
/// file, or a script without an extension.
pub fn may_be_python(path: &Path) -> bool {
    path.extension().is_none_or(|e| e == "py" || e == "pyi" || e == "pyw")
}

/// Lints one file: its findings and line count, or why it could not be read.
pub fn lint_file(
    path: &Path,
    selection: &Selection,
    cache: &ImportCache,
) -> Result<(Vec<Violation>, usize), Unreadable> {
    let text = read_source(path)?;
    let lines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    let imports = FileImports { file: path, cache };
    Ok((lint_source_with(&display(path), &text, selection, &imports), lines))
}

/// Reads one Python file for lint (see [`assertscope_flow::walk::read_source`]).
pub fn read_source(path: &Path) -> Result<String, Unreadable> {
    assertscope_flow::walk::read_source(path, "lint")
}
