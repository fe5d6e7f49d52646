//! Helpers of the slice tests: a project written to a temporary directory, a query at a
//! line, and the trail written one step a line.

#![allow(dead_code)]

use assertscope_flow::slice::{self, BadValues, Chain, Frame, Operand, Query, Sources, Trail};
use std::path::{Path, PathBuf};

pub struct Project {
    pub dir: tempfile::TempDir,
}

impl Project {
    pub fn new(files: &[(&str, &str)]) -> Project {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        Project { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn sources(&self) -> Sources {
        Sources { root: Some(self.dir.path().to_path_buf()), ..Sources::default() }
    }

    /// The trail of `parameter` of `op` at `file:line` (frames innermost first).
    pub fn trail(&self, frames: &[(&str, usize)], op: &str, parameter: &str, bad: &[f64]) -> Trail {
        let query = self.query(frames, op, parameter, bad);
        slice::with_project(self.sources(), |p| slice::trace(p, &query))
    }

    pub fn query(&self, frames: &[(&str, usize)], op: &str, parameter: &str, bad: &[f64]) -> Query {
        Query {
            frames: frames
                .iter()
                .map(|(f, l)| Frame { file: self.path(f), line: *l, function: None, columns: None })
                .collect(),
            operand: Operand {
                op: Some(op.to_string()).filter(|o| !o.is_empty()),
                parameter: Some(parameter.to_string()).filter(|p| !p.is_empty()),
                ..Operand::default()
            },
            chain: Some(Chain::Value),
            bad: BadValues { values: bad.to_vec(), ..BadValues::default() },
            ..Query::default()
        }
    }
}

/// One step a line: `file:line role: note`, then the end if any.
pub fn show(trail: &Trail) -> String {
    let mut out = String::new();
    for s in &trail.steps {
        let file = Path::new(&s.path).file_name().unwrap().to_string_lossy();
        out.push_str(&format!(
            "{file}:{} {}{}: {}\n",
            s.line,
            s.role.as_str(),
            if s.confirmed { " (confirmed)" } else { "" },
            s.note
        ));
    }
    if let Some(e) = &trail.end {
        let file = Path::new(&e.path).file_name().unwrap().to_string_lossy();
        out.push_str(&format!("{file}:{} end: {}\n", e.line, e.note));
    }
    out
}

/// The line of the made step, if the trail has one.
pub fn made_line(trail: &Trail) -> Option<usize> {
    trail.steps.iter().find(|s| s.role == assertscope_flow::slice::Role::Made).map(|s| s.line)
}
