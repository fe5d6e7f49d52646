//! A walk's outcome as a trail: its steps located (file, line, function, code), one per
//! line, the strongest role of a line kept; the start of the walk from a query.

use super::follow::{same_file, Draft, Outcome, Walker};
use super::project::{Module, Project};
use super::query::{Chain, Frame, Query, Role};
use crate::semantic::ScopeId;
use ruff_text_size::Ranged;
use std::path::PathBuf;

/// One proved step of a trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// As shown (relative to the working directory when under it).
    pub file: String,
    pub path: PathBuf,
    pub line: usize,
    pub function: String,
    /// The line's text, without its indentation.
    pub code: String,
    pub role: Role,
    pub chain: Chain,
    pub note: String,
    /// A runtime fact confirms it: the call stack ran this line, the bad value was seen
    /// on it, or a live read of the object it reads holds the bad value.
    pub confirmed: bool,
}

/// Where a trail stops before reaching the statement that made the value, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct End {
    pub file: String,
    pub path: PathBuf,
    pub line: usize,
    pub function: String,
    pub code: String,
    pub note: String,
}

/// The answer to one query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trail {
    pub steps: Vec<Step>,
    pub end: Option<End>,
}

/// The trail of the value at the innermost frame's line.
pub fn value_trail(project: &Project<'_>, query: &Query) -> Trail {
    let Some(frame) = query.frames.first() else { return Trail::default() };
    let Some(m) = project.module(&frame.file) else { return Trail::default() };
    let chain = query.chain.unwrap_or(Chain::Value);
    let mut walker = Walker::new(project, query, chain);
    let starts = match super::start::operand(&walker, m, frame) {
        Ok(starts) => starts,
        Err(end) => return Trail { steps: Vec::new(), end: Some(located(&end, frame)) },
    };
    walker.want = super::shapes::wanted_fact(&walker, &starts);
    let first = starts[0].cursor().clone();
    let at = first.expr.start();
    let outcomes: Vec<Outcome<'_>> = starts
        .into_iter()
        .map(|start| match start {
            super::start::Start::Expr(c) => walker.follow(c),
            super::start::Start::Name(c, name, at) => walker.name_at(&c, &name, at),
        })
        .collect();
    let outcome = walker.pick(&first, at, "the holders of the value", outcomes);
    to_trail(outcome, frame)
}

/// Steps located; those on the starting line are left out unless the value was made there.
pub fn to_trail(outcome: Outcome<'_>, frame: &Frame) -> Trail {
    let (drafts, end) = match outcome {
        Outcome::Made(steps, _) => (steps, None),
        Outcome::End(steps, end) => (steps, Some(end)),
        Outcome::Dead => (Vec::new(), None),
    };
    let mut steps: Vec<Step> = Vec::new();
    for draft in drafts {
        let step = locate(&draft);
        let on_start = step.line == frame.line && same_file(&step.path, &frame.file);
        if on_start && step.role != Role::Made {
            continue;
        }
        match steps.last_mut() {
            Some(last) if last.line == step.line && last.path == step.path => {
                if step.role > last.role {
                    last.role = step.role;
                    last.note = step.note;
                    last.chain = step.chain;
                }
                last.confirmed |= step.confirmed;
            }
            _ => steps.push(step),
        }
    }
    let end = end.map(|e| located(&e, frame));
    Trail { steps, end }
}

fn locate(draft: &Draft<'_>) -> Step {
    let m = draft.m;
    let line = m.file.line_of(draft.at);
    let span = m.file.line_span(line);
    let code = m.file.text()[span].trim().to_string();
    let scope = m.index.scope_at(draft.at);
    Step {
        file: m.display.clone(),
        path: m.path.to_path_buf(),
        line,
        function: Project::function_name(m, enclosing_function(m, scope)),
        code,
        role: draft.role,
        chain: draft.chain,
        note: draft.note.clone(),
        confirmed: draft.confirmed,
    }
}

/// The function scope holding `scope` (a class body counts as `<module>`'s).
fn enclosing_function(m: &Module<'_>, scope: ScopeId) -> ScopeId {
    let mut s = Some(scope);
    while let Some(id) = s {
        if matches!(m.sem.scopes[id].kind, crate::semantic::ScopeKind::Function { .. }) {
            return id;
        }
        s = m.sem.scopes[id].parent;
    }
    crate::semantic::MODULE
}

fn located(end: &Draft<'_>, _frame: &Frame) -> End {
    let step = locate(end);
    End {
        file: step.file,
        path: step.path,
        line: step.line,
        function: step.function,
        code: step.code,
        note: step.note,
    }
}
