//! Lint configuration, found the way ruff finds its own: each file is linted with the
//! `[tool.assertscope.lint]` of the nearest `pyproject.toml` above it that has a
//! `[tool.assertscope]` table, else with the one above the current directory, else with the
//! defaults. `--config FILE` uses one file for everything (its globs relative to the current
//! directory, as ruff does); `--isolated` reads none. Globs are relative to the directory of
//! the file that sets them and match a path below it or any file or directory name.

pub mod options;

use crate::selection::Selection;
use globset::{Glob, GlobSet, GlobSetBuilder};
use options::LintOptions;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Directories and files no walk enters unless `exclude` replaces this list: ruff's defaults.
pub const DEFAULT_EXCLUDE: &[&str] = &[
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pypackages__",
    "_build",
    "buck-out",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
];

/// What applies to the files under one configuration.
#[derive(Debug)]
pub struct Settings {
    /// The file it was read from (`None`: the defaults).
    pub file: Option<PathBuf>,
    /// The directory its globs are relative to.
    root: PathBuf,
    selection: Selection,
    exclude: Patterns,
    per_file_ignores: Vec<(Patterns, Vec<String>)>,
}

impl Settings {
    /// The settings of `options` read from `file`, its globs relative to `root`, with the
    /// command line's selection layered over them.
    fn new(
        options: &LintOptions,
        file: Option<PathBuf>,
        root: &Path,
        command_line: &Selection,
    ) -> anyhow::Result<Settings> {
        let name = |key: &str| match &file {
            Some(file) => format!("{}: `tool.assertscope.lint.{key}`", file.display()),
            None => key.to_string(),
        };
        let config = Selection::new(options.select.as_deref().unwrap_or(&[]), &options.ignore)?;
        let mut exclude: Vec<String> = match &options.exclude {
            Some(list) => list.clone(),
            None => DEFAULT_EXCLUDE.iter().map(|s| s.to_string()).collect(),
        };
        exclude.extend(options.extend_exclude.iter().cloned());
        let exclude =
            Patterns::new(&exclude, root).map_err(|e| anyhow::anyhow!("{}: {e}", name("exclude")))?;
        let per_file_ignores = options
            .per_file_ignores
            .iter()
            .map(|(glob, codes)| {
                let patterns = Patterns::new(std::slice::from_ref(glob), root)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", name("per-file-ignores")))?;
                Ok((patterns, codes.clone()))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Settings {
            file,
            root: root.to_path_buf(),
            selection: Selection::layered(&config, command_line),
            exclude,
            per_file_ignores,
        })
    }

    /// Whether the walk leaves out `path` (absolute): its name or its path below the
    /// configuration's directory matches `exclude` or `extend-exclude`.
    pub fn excludes(&self, path: &Path) -> bool {
        self.exclude.matches(path)
    }

    /// Whether a path named on the command line is left out with `--force-exclude`: it or
    /// a directory above it, up to the configuration's directory, is excluded (as ruff
    /// checks a file that pre-commit names).
    pub fn excludes_named(&self, path: &Path) -> bool {
        path.ancestors()
            .take_while(|p| p.starts_with(&self.root) && *p != self.root)
            .any(|p| self.excludes(p))
    }

    /// The rules for the file at `path` (absolute), less its `per-file-ignores`.
    pub fn selection_for(&self, path: &Path) -> Selection {
        let ignored: Vec<String> = self
            .per_file_ignores
            .iter()
            .filter(|(patterns, _)| patterns.matches(path))
            .flat_map(|(_, codes)| codes.iter().cloned())
            .collect();
        if ignored.is_empty() {
            self.selection.clone()
        } else {
            self.selection.ignoring(&ignored)
        }
    }
}

/// Globs matched as ruff matches them: against the file or directory name, and against the
/// absolute path with the glob anchored at the configuration's directory.
#[derive(Debug)]
struct Patterns {
    names: GlobSet,
    paths: GlobSet,
}

impl Patterns {
    fn new(globs: &[String], root: &Path) -> Result<Patterns, String> {
        let mut names = GlobSetBuilder::new();
        let mut paths = GlobSetBuilder::new();
        for glob in globs {
            let compile =
                |text: &str| Glob::new(text).map_err(|e| format!("`{glob}` is not a glob: {}", e.kind()));
            names.add(compile(glob)?);
            let anchored = root.join(glob.trim_start_matches("./"));
            paths.add(compile(&anchored.to_string_lossy())?);
        }
        let build = |set: GlobSetBuilder| set.build().map_err(|e| e.to_string());
        Ok(Patterns { names: build(names)?, paths: build(paths)? })
    }

    fn matches(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| self.names.is_match(name)) || self.paths.is_match(path)
    }
}

/// How configuration is found for a run.
pub struct Configs {
    command_line: Selection,
    /// For a file with no configuration above it (or every file, with `--config` or
    /// `--isolated`).
    fallback: Arc<Settings>,
    /// `None`: one configuration for everything.
    nearest: Option<Mutex<HashMap<PathBuf, Arc<Settings>>>>,
}

impl Configs {
    /// `config`: `--config FILE`; `isolated`: `--isolated`; `command_line`: `--select` and
    /// `--ignore`.
    pub fn new(config: Option<&Path>, isolated: bool, command_line: Selection) -> anyhow::Result<Configs> {
        let cwd = std::env::current_dir()?;
        if isolated {
            let fallback = Arc::new(Settings::new(&LintOptions::default(), None, &cwd, &command_line)?);
            return Ok(Configs { command_line, fallback, nearest: None });
        }
        if let Some(file) = config {
            let options = options::read(file)?.ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: --config names a file without a [tool.assertscope.lint] table",
                    file.display()
                )
            })?;
            let fallback = Arc::new(Settings::new(&options, Some(file.to_path_buf()), &cwd, &command_line)?);
            return Ok(Configs { command_line, fallback, nearest: None });
        }
        let mut configs = Configs {
            fallback: Arc::new(Settings::new(&LintOptions::default(), None, &cwd, &command_line)?),
            command_line,
            nearest: Some(Mutex::new(HashMap::new())),
        };
        configs.fallback = configs.for_directory(&cwd)?;
        Ok(configs)
    }

    /// The settings of a file or directory met in the walk (absolute): those of the nearest
    /// configuration of the directory it is in.
    pub fn for_path(&self, path: &Path) -> anyhow::Result<Arc<Settings>> {
        match path.parent() {
            Some(dir) => self.for_directory(dir),
            None => Ok(self.fallback.clone()),
        }
    }

    fn for_directory(&self, dir: &Path) -> anyhow::Result<Arc<Settings>> {
        let Some(nearest) = &self.nearest else { return Ok(self.fallback.clone()) };
        // Up the tree to a directory already known or one with a configuration; every
        // directory on the way gets the same answer.
        let mut unknown = Vec::new();
        let mut found = None;
        for ancestor in dir.ancestors() {
            if let Some(known) = nearest.lock().unwrap().get(ancestor) {
                found = Some(known.clone());
                break;
            }
            unknown.push(ancestor.to_path_buf());
            let candidate = ancestor.join("pyproject.toml");
            if candidate.is_file() {
                if let Some(options) = options::read(&candidate)? {
                    found = Some(Arc::new(Settings::new(
                        &options,
                        Some(candidate),
                        ancestor,
                        &self.command_line,
                    )?));
                    break;
                }
            }
        }
        let settings = found.unwrap_or_else(|| self.fallback.clone());
        let mut nearest = nearest.lock().unwrap();
        for dir in unknown {
            nearest.entry(dir).or_insert_with(|| settings.clone());
        }
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(text: &str, root: &Path) -> Settings {
        let options = options::parse(Path::new("pyproject.toml"), text).unwrap().unwrap();
        Settings::new(&options, None, root, &Selection::all()).unwrap()
    }

    #[test]
    fn globs_match_names_anywhere_and_paths_below_the_configuration() {
        let root = Path::new("/project");
        let s = settings(
            "[tool.assertscope.lint]\nextend-exclude = [\"generated\", \"scripts/*.py\"]\n\
             [tool.assertscope.lint.per-file-ignores]\n\"tests/*\" = [\"AS101\"]\n\"conftest.py\" = [\"AS1\"]\n",
            root,
        );
        assert!(s.excludes(Path::new("/project/a/generated")));
        assert!(s.excludes(Path::new("/project/scripts/run.py")));
        assert!(!s.excludes(Path::new("/project/src/scripts/run.py")));
        assert!(s.excludes_named(Path::new("/project/a/generated/x.py")));
        assert!(!s.excludes_named(Path::new("/project/a/x.py")));
        assert!(s.excludes(Path::new("/project/.venv")), "the defaults still apply with extend-exclude");
        assert!(!s.selection_for(Path::new("/project/tests/test_a.py")).selects("AS101"));
        assert!(s.selection_for(Path::new("/project/tests/test_a.py")).selects("AS102"));
        assert!(s.selection_for(Path::new("/project/src/a.py")).selects("AS101"));
        assert!(!s.selection_for(Path::new("/project/src/conftest.py")).selects("AS111"));
        let replaced = settings("[tool.assertscope.lint]\nexclude = [\"old\"]\n", root);
        assert!(
            !replaced.excludes(Path::new("/project/.venv")) && replaced.excludes(Path::new("/project/old"))
        );
    }
}
