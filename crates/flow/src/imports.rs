//! Local modules a file imports, followed one level deep: `from model import VAE` in
//! `train.py` finds `model.py` beside it (or in the package around it), and what the rules
//! need from it is summarised once per module — what each model class's `forward` returns,
//! what each function returns, the module's integer constants — with the places that show
//! it, for the evidence of a finding. Summaries are cached across the files of a run, and
//! made only when a rule asks about an imported name.

use crate::flow::Flow;
use crate::semantic::{Bound, Semantic, MODULE};
use crate::source::SourceFile;
use crate::summary::{ClassSummary, FunctionSummary, ModuleSummary, NoImports, Resolver};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Summaries by file, shared by the threads of one run.
#[derive(Default)]
pub struct ImportCache {
    modules: Mutex<HashMap<PathBuf, Option<Arc<ModuleSummary>>>>,
}

/// Resolves the imports of one file on disk.
pub struct FileImports<'c> {
    pub file: &'c Path,
    pub cache: &'c ImportCache,
}

/// How many package levels up an absolute import is looked for: the file's own directory,
/// then each enclosing package (a directory with `__init__.py`).
const MAX_PACKAGE_DEPTH: usize = 4;

impl Resolver for FileImports<'_> {
    fn module(&self, level: u32, module: &str) -> Option<Arc<ModuleSummary>> {
        self.cache.summary(&module_path(self.file, level, module)?)
    }
}

/// The file of the local module `from <dots><module> import …` names in `file`, `level`
/// being the number of dots: a relative import from the package `level - 1` directories up,
/// an absolute one beside the file or in an enclosing package. `None` for a module that is
/// not a file of the project (a library) or for the file itself.
pub fn module_path(file: &Path, level: u32, module: &str) -> Option<PathBuf> {
    let dir = file.parent()?;
    let relative: PathBuf = module.split('.').filter(|p| !p.is_empty()).collect();
    if relative.as_os_str().is_empty() {
        return None;
    }
    let mut bases: Vec<PathBuf> = Vec::new();
    if level > 0 {
        let mut base = dir.to_path_buf();
        for _ in 1..level {
            base = base.parent()?.to_path_buf();
        }
        bases.push(base);
    } else {
        let mut base = Some(dir);
        for _ in 0..MAX_PACKAGE_DEPTH {
            let Some(b) = base else { break };
            bases.push(b.to_path_buf());
            if !b.join("__init__.py").is_file() {
                break;
            }
            base = b.parent();
        }
    }
    for base in bases {
        let as_file = base.join(&relative).with_extension("py");
        let as_package = base.join(&relative).join("__init__.py");
        for candidate in [as_file, as_package] {
            if candidate.is_file() && candidate != file {
                return Some(candidate);
            }
        }
    }
    None
}

impl ImportCache {
    fn summary(&self, path: &Path) -> Option<Arc<ModuleSummary>> {
        if let Some(known) = self.modules.lock().unwrap().get(path) {
            return known.clone();
        }
        // Computed without the lock held; two threads may both compute it, which is harmless.
        let summary = crate::walk::read_source(path, "assertscope")
            .ok()
            .map(|text| Arc::new(summarize(&display(path), &text)));
        self.modules.lock().unwrap().insert(path.to_path_buf(), summary.clone());
        summary
    }
}

fn display(path: &Path) -> String {
    let text = path.to_string_lossy();
    text.strip_prefix("./").unwrap_or(&text).to_string()
}

/// Summarises one module's text; `path` labels the places.
pub fn summarize(path: &str, text: &str) -> ModuleSummary {
    let parsed = SourceFile::parse(text);
    let sem = Semantic::build(parsed.suite());
    let mut summary = ModuleSummary::default();
    let truncated = sem.truncated;
    if !truncated {
        let flow = Flow::new(&sem, &NoImports);
        let place = |range| parsed.locate_related(path, range, String::new());
        for class in &sem.classes {
            let name = class.def.name.to_string();
            let (output, at) = flow.class_output(class);
            let classes = flow.class_count_of_class(class).map(|(n, range)| (n, place(range)));
            let elements = flow.class_output_elements(class);
            summary
                .classes
                .insert(name, ClassSummary { output, output_at: at.map(place), elements, classes });
        }
        for (name, bindings) in &sem.scopes[MODULE].bindings {
            if let Some(&function) = sem.function_in.get(&(MODULE, *name)) {
                let (returns, at) = flow.function_returns(function);
                summary
                    .functions
                    .insert(name.to_string(), FunctionSummary { returns, returns_at: at.map(place) });
                continue;
            }
            let values: Vec<Option<i64>> = bindings
                .iter()
                .map(|b| match b.value {
                    Bound::Value(v) => flow.int_value(v, MODULE),
                    _ => None,
                })
                .collect();
            if let Some(Some(first)) = values.first() {
                if values.iter().all(|v| *v == Some(*first)) {
                    summary.int_constants.insert(name.to_string(), *first);
                }
            }
        }
    }
    drop(sem);
    parsed.dispose(truncated);
    summary
}
