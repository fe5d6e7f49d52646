//! The files a slice reads: parsed once each, on first use, and kept for the whole query
//! (their syntax trees are borrowed by every step). A file is refused, with one note
//! saying why, when it is missing, not Python, too large, or changed since the process
//! that failed started: a path drawn over other code than the one that ran would be wrong.

use super::index::Index;
use crate::flow::Flow;
use crate::imports::{FileImports, ImportCache};
use crate::semantic::Semantic;
use crate::source::SourceFile;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// An append-only store: what it holds stays put until it is dropped, so references to it
/// live as long as the store. (A `Vec<Box<T>>`: boxes never move when the vector grows.)
pub struct Arena<T> {
    items: RefCell<Vec<Box<T>>>,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena { items: RefCell::new(Vec::new()) }
    }
}

impl<T> Arena<T> {
    pub fn alloc(&self, value: T) -> &T {
        let boxed = Box::new(value);
        let at: *const T = &*boxed;
        self.items.borrow_mut().push(boxed);
        // SAFETY: the box is owned by `items`, which only ever grows; its heap allocation
        // never moves and is freed only when the arena is dropped, which the returned
        // borrow of `self` outlives not.
        unsafe { &*at }
    }
}

/// The storage of one query's files.
#[derive(Default)]
pub struct Store<'a> {
    texts: Arena<String>,
    files: Arena<SourceFile<'a>>,
    sems: Arena<Semantic<'a>>,
    paths: Arena<PathBuf>,
    resolvers: Arena<FileImports<'a>>,
    modules: Arena<Module<'a>>,
    cache: ImportCache,
}

/// One parsed file and what is known of it.
pub struct Module<'a> {
    /// The path as given (absolute from a guard report, as written in a traceback otherwise).
    pub path: &'a Path,
    /// The path as shown: relative to the working directory when under it.
    pub display: String,
    pub file: &'a SourceFile<'a>,
    pub sem: &'a Semantic<'a>,
    pub flow: Flow<'a>,
    pub index: Index<'a>,
}

/// What a file on disk looked like when the process started (`os.stat` at failure time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub size: u64,
    pub mtime_ns: i128,
}

/// How files are found and when one is refused.
#[derive(Debug, Default, Clone)]
pub struct Sources {
    /// Text of files that are not on disk (notebook cells, `exec` strings), by name.
    pub texts: HashMap<String, String>,
    /// Size and modification time of files at failure time: a file that differs now was
    /// edited after the failure.
    pub stamps: HashMap<PathBuf, Stamp>,
    /// Unix time the process started: a file modified later is not the code that ran.
    pub started: Option<f64>,
    /// Where project files are searched for callers (the script's directory).
    pub root: Option<PathBuf>,
}

/// The largest source file the analysis reads: past it the file is generated code.
pub const MAX_SOURCE_BYTES: u64 = 4 << 20;

pub struct Project<'a> {
    store: &'a Store<'a>,
    pub sources: Sources,
    loaded: RefCell<HashMap<PathBuf, Option<&'a Module<'a>>>>,
    /// Why files were refused, one line each, in order.
    notes: RefCell<Vec<String>>,
    /// Every Python file of the project, once listed.
    project_files: RefCell<Option<Vec<PathBuf>>>,
}

impl<'a> Project<'a> {
    pub fn new(store: &'a Store<'a>, sources: Sources) -> Project<'a> {
        Project {
            store,
            sources,
            loaded: RefCell::new(HashMap::new()),
            notes: RefCell::new(Vec::new()),
            project_files: RefCell::new(None),
        }
    }

    /// The notes on refused files.
    pub fn notes(&self) -> Vec<String> {
        self.notes.borrow().clone()
    }

    fn note(&self, text: String) {
        let mut notes = self.notes.borrow_mut();
        if !notes.contains(&text) {
            notes.push(text);
        }
    }

    /// The module of `path`, parsed; `None` (with a note) when it cannot be used.
    pub fn module(&self, path: &Path) -> Option<&'a Module<'a>> {
        if let Some(known) = self.loaded.borrow().get(path) {
            return *known;
        }
        let module = match self.read(path) {
            Ok(text) => Some(self.parse(path, text)),
            Err(why) => {
                self.note(format!("{}: {why}; the origin is not traced through it", display(path)));
                None
            }
        };
        self.loaded.borrow_mut().insert(path.to_path_buf(), module);
        module
    }

    /// Whether `path` can be read as it was when the process ran, without a note.
    pub fn readable(&self, path: &Path) -> bool {
        self.loaded.borrow().get(path).map_or_else(|| self.read(path).is_ok(), Option::is_some)
    }

    fn read(&self, path: &Path) -> Result<String, String> {
        let name = path.to_string_lossy();
        if let Some(text) = self.sources.texts.get(name.as_ref()) {
            return Ok(text.clone());
        }
        if name.starts_with('<') {
            return Err(
                "not a file (code run from a string or a notebook cell whose text was not recorded)".into()
            );
        }
        let metadata = std::fs::metadata(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_string(),
            _ => e.to_string(),
        })?;
        if !metadata.is_file() {
            return Err("not a regular file".into());
        }
        if metadata.len() > MAX_SOURCE_BYTES {
            return Err(format!(
                "too large to be a training script ({:.1} MiB; the origin reads files up to {} MiB)",
                metadata.len() as f64 / (1u64 << 20) as f64,
                MAX_SOURCE_BYTES >> 20
            ));
        }
        if let Some(why) = self.changed(path, &metadata) {
            return Err(why);
        }
        let text = crate::walk::read_source(path, "assertscope").map_err(|u| u.message)?;
        if !looks_like_python(path, &text) {
            return Err("not Python source".into());
        }
        Ok(text)
    }

    /// Why the file on disk is not the code that ran, if it is not.
    fn changed(&self, path: &Path, metadata: &std::fs::Metadata) -> Option<String> {
        let mtime_ns = metadata
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_nanos() as i128);
        if let Some(stamp) = self.sources.stamps.get(path) {
            if stamp.size != metadata.len() {
                return Some(format!(
                    "changed since the process ran ({} bytes then, {} now)",
                    stamp.size,
                    metadata.len()
                ));
            }
            if mtime_ns.is_some_and(|m| m != stamp.mtime_ns) {
                return Some("changed since the process ran (modified after the failure)".into());
            }
            return None;
        }
        let started = self.sources.started?;
        let modified = mtime_ns? as f64 / 1e9;
        (modified > started).then(|| "changed since the process started (modified after it began)".into())
    }

    fn parse(&self, path: &Path, text: String) -> &'a Module<'a> {
        let store = self.store;
        let text: &'a String = store.texts.alloc(text);
        let file: &'a SourceFile<'a> = store.files.alloc(SourceFile::parse(text));
        let sem: &'a Semantic<'a> = store.sems.alloc(Semantic::build(file.suite()));
        let path: &'a PathBuf = store.paths.alloc(path.to_path_buf());
        let resolver: &'a FileImports<'a> =
            store.resolvers.alloc(FileImports { file: path, cache: &store.cache });
        let flow = Flow::new(sem, resolver);
        let index = Index::build(file.suite(), sem);
        store.modules.alloc(Module { path, display: display(path), file, sem, flow, index })
    }

    /// Every Python file under the project root (honouring `.gitignore`), listed once.
    pub fn project_files(&self) -> Vec<PathBuf> {
        if let Some(files) = self.project_files.borrow().as_ref() {
            return files.clone();
        }
        let files = match &self.sources.root {
            Some(root) => crate::walk::python_files(root, MAX_PROJECT_FILES),
            None => Vec::new(),
        };
        *self.project_files.borrow_mut() = Some(files.clone());
        files
    }
}

/// How many files of a project are searched for the callers of a function: a training
/// project has tens; a directory with thousands is not one project (a home directory).
const MAX_PROJECT_FILES: usize = 2_000;

/// A file the analysis can read as Python: a `.py` file, a notebook cell's text, or any
/// text whose first lines parse (a script without an extension).
fn looks_like_python(path: &Path, text: &str) -> bool {
    match path.extension().and_then(|e| e.to_str()) {
        Some("py" | "pyw" | "pyi") => true,
        Some(_) => false,
        None => !text.contains('\0'),
    }
}

/// A path as shown: relative to the working directory when under it.
pub fn display(path: &Path) -> String {
    if let Ok(cwd) = std::env::current_dir() {
        if let Ok(relative) = path.strip_prefix(&cwd) {
            if !relative.as_os_str().is_empty() {
                return relative.to_string_lossy().into_owned();
            }
        }
    }
    let text = path.to_string_lossy();
    text.strip_prefix("./").unwrap_or(&text).to_string()
}
