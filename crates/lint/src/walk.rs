//! Violation and linting the files: directories are walked in parallel with the `ignore` crate
//! (as ripgrep does), honouring `.gitignore`, `.ignore` and hidden files; each file is linted
//! on the thread that found it.

use crate::config::Configs;
use crate::linter::lint_source_with;
use crate::selection::Selection;
use crate::violation::Violation;
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
    /// Files the fixes changed (written back with `--fix`, shown with `--diff`), by path.
    pub changed: Vec<Changed>,
    /// Fixes applied over all files.
    pub fixed: usize,
}

/// One file that fixes changed.
#[derive(Debug)]
pub struct Changed {
    pub path: String,
    pub before: String,
    pub after: String,
    /// False when the rounds of fixes ran out before the file was stable.
    pub converged: bool,
}

/// What `--fix` and `--diff` ask of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FixMode {
    #[default]
    Report,
    /// Apply the fixes and write the files back.
    Apply { unsafe_fixes: bool },
    /// Compute the fixed files without writing them.
    Diff { unsafe_fixes: bool },
}

/// How a run finds and treats its files.
pub struct WalkOptions<'a> {
    pub configs: &'a Configs,
    pub threads: usize,
    /// Leave out paths named on the command line too when `exclude` matches them (ruff's
    /// `--force-exclude`: pre-commit names every staged file).
    pub force_exclude: bool,
    pub fix: FixMode,
}

/// Lints every Python file under `paths` (a file named directly is linted whatever its
/// name, unless its extension says it is something else), each with the configuration that
/// applies to it. An error: a file named is not Python, or a configuration file met on the
/// way is wrong.
pub fn lint_paths(paths: &[PathBuf], options: &WalkOptions) -> anyhow::Result<LintRun> {
    // Markdown parsed as Python would report "no problems".
    if let Some(path) = paths.iter().find(|p| p.is_file() && !may_be_python(p)) {
        anyhow::bail!(
            "{}: not a Python file (lint reads .py and .pyi files, and scripts without an extension)",
            path.display()
        );
    }
    let run = SharedRun::default();
    let roots = existing_roots(paths, &run.outcome);
    if let Some((first, rest)) = roots.split_first() {
        let mut builder = ignore::WalkBuilder::new(first);
        for root in rest {
            builder.add(root);
        }
        builder.require_git(false).threads(options.threads);
        builder.build_parallel().run(|| {
            let run = &run;
            Box::new(move |entry| visit(entry, run, options))
        });
    }
    let SharedRun { outcome, config_error, .. } = run;
    if let Some(err) = config_error.into_inner().unwrap() {
        return Err(err);
    }
    let mut outcome = outcome.into_inner().unwrap();
    outcome
        .findings
        .sort_by(|a, b| (&a.path, a.line, a.column, a.code).cmp(&(&b.path, b.line, b.column, b.code)));
    outcome.unreadable.sort_by(|a, b| a.path.cmp(&b.path));
    outcome.changed.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(outcome)
}

/// What the walk's threads share: the run so far, the modules' import summaries, and the
/// first configuration error (which stops the walk).
#[derive(Default)]
struct SharedRun {
    outcome: Mutex<LintRun>,
    cache: ImportCache,
    config_error: Mutex<Option<anyhow::Error>>,
}

/// The paths that exist; the others are noted as unreadable.
fn existing_roots<'p>(paths: &'p [PathBuf], outcome: &Mutex<LintRun>) -> Vec<&'p PathBuf> {
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
    roots
}

/// One entry of the walk: skipped when excluded, linted when it is a Python file (or a
/// file named on the command line).
fn visit(
    entry: Result<ignore::DirEntry, ignore::Error>,
    run: &SharedRun,
    options: &WalkOptions,
) -> ignore::WalkState {
    let entry = match entry {
        Ok(entry) => entry,
        Err(err) => {
            let path = match &err {
                ignore::Error::WithPath { path, .. } => display(path),
                _ => String::new(),
            };
            run.outcome.lock().unwrap().unreadable.push(Unreadable { path, message: err.to_string() });
            return ignore::WalkState::Continue;
        }
    };
    let named = entry.depth() == 0;
    let absolute = std::path::absolute(entry.path()).unwrap_or_else(|_| entry.path().to_path_buf());
    let settings = match options.configs.for_path(&absolute) {
        Ok(settings) => settings,
        Err(err) => {
            run.config_error.lock().unwrap().get_or_insert(err);
            return ignore::WalkState::Quit;
        }
    };
    let excluded = match named {
        false => settings.excludes(&absolute),
        true => options.force_exclude && settings.excludes_named(&absolute),
    };
    if excluded {
        return ignore::WalkState::Skip;
    }
    let is_file = entry.file_type().is_some_and(|t| t.is_file() || (named && !t.is_dir()));
    let is_python = entry.path().extension().is_some_and(|e| e == "py");
    if is_file && (named || is_python) {
        let selection = settings.selection_for(&absolute);
        let result = lint_file(entry.path(), &selection, &run.cache, options.fix);
        let mut outcome = run.outcome.lock().unwrap();
        match result {
            Ok(linted) => {
                outcome.files += 1;
                outcome.lines += linted.lines;
                outcome.findings.extend(linted.findings);
                outcome.fixed += linted.fixed;
                outcome.changed.extend(linted.changed);
            }
            Err(unreadable) => outcome.unreadable.push(unreadable),
        }
    }
    ignore::WalkState::Continue
}

/// Whether a file named on the command line may hold Python: a `.py`, `.pyi` or `.pyw`
/// file, or a script without an extension.
pub fn may_be_python(path: &Path) -> bool {
    path.extension().is_none_or(|e| e == "py" || e == "pyi" || e == "pyw")
}

/// One file linted (and fixed).
pub struct Linted {
    pub findings: Vec<Violation>,
    pub lines: usize,
    pub fixed: usize,
    pub changed: Option<Changed>,
}

/// Lints one file, applying its fixes as `fix` asks: its findings (those left after the
/// fixes) and line count, or why it could not be read or written.
pub fn lint_file(
    path: &Path,
    selection: &Selection,
    cache: &ImportCache,
    fix: FixMode,
) -> Result<Linted, Unreadable> {
    let text = read_source(path)?;
    let lines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    let imports = FileImports { file: path, cache };
    let name = display(path);
    let (FixMode::Apply { unsafe_fixes } | FixMode::Diff { unsafe_fixes }) = fix else {
        let findings = lint_source_with(&name, &text, selection, &imports);
        return Ok(Linted { findings, lines, fixed: 0, changed: None });
    };
    let fixed = super::fix::fix_until_stable(&name, &text, selection, &imports, unsafe_fixes);
    let changed = (fixed.text != text).then(|| Changed {
        path: name.clone(),
        before: text,
        after: fixed.text,
        converged: fixed.converged,
    });
    if let (FixMode::Apply { .. }, Some(changed)) = (fix, &changed) {
        std::fs::write(path, &changed.after).map_err(|err| Unreadable {
            path: name.clone(),
            message: format!("cannot write the fixes: {}", describe_io(&err)),
        })?;
    }
    Ok(Linted { findings: fixed.findings, lines, fixed: fixed.applied, changed })
}

/// Reads one Python file for lint (see [`assertscope_flow::walk::read_source`]).
pub fn read_source(path: &Path) -> Result<String, Unreadable> {
    assertscope_flow::walk::read_source(path, "lint")
}
