//! Parameters: the argument the call that ran passed (from the runtime stack, and the
//! `^^^` columns of its line), else the arguments at the project's call sites of the
//! function (its module's and those of modules that import it; a `forward`'s are the calls
//! of its class's instances), else its default.

use super::follow::{Cursor, Draft, Outcome, Sel, Walker};
use super::made;
use super::names::{frame_range, line_offset, marked};
use super::project::Module;
use super::query::Role;
use super::resolve::Object;
use crate::semantic::{ClassId, ScopeId, ScopeKind, MODULE};
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextSize};

/// How many callers of a parameter are followed before the trail ends there.
const MAX_CALLERS: usize = 8;
/// How many call sites of one name a module is searched for.
const MAX_SITES: usize = 256;

impl<'p, 'a> Walker<'p, 'a> {
    /// A parameter: the argument the call that ran passed (runtime stack), else the one
    /// call of the project, else its default.
    pub fn parameter(
        &self,
        cur: &Cursor<'a>,
        fn_scope: ScopeId,
        index: usize,
        param: &'a str,
        default: Option<&'a Expr>,
        used: TextSize,
    ) -> Outcome<'a> {
        let m = cur.m;
        let ScopeKind::Function { def, class } = m.sem.scopes[fn_scope].kind else {
            return self.end(cur, used, format!("`{param}`: not followed further"));
        };
        if index == 0 && class.is_some() {
            return self.end(cur, used, format!("`{param}` is the object itself; not followed further"));
        }
        let function = super::project::Project::function_name(m, fn_scope);
        // Where the trail ends when no caller is followed: the parameter itself.
        let used = def
            .parameters
            .iter_non_variadic_params()
            .find(|p| p.parameter.name.as_str() == param)
            .map_or(used, |p| p.parameter.range.start());
        if let Some(found) = self.runtime_caller(cur, fn_scope, def, index, param, class.is_some()) {
            return found;
        }
        let calls = self.callers(m, fn_scope);
        let mut candidates: Vec<(Option<Draft<'a>>, Cursor<'a>)> = Vec::new();
        let mut missing = false;
        for (cm, cscope, call) in &calls {
            let position = super::calls::param_position(index, class.is_some());
            match crate::semantic::argument(call, param, position) {
                Some(arg) => {
                    let note = format!("passed as `{param}` to `{function}`");
                    // At the argument: in a call over several lines, the line that passes it.
                    let mut draft = self.draft(cm, arg.start(), Role::Move, note);
                    draft.confirmed |= self.on_stack(cm, call.start());
                    let next = Cursor {
                        m: cm,
                        scope: *cscope,
                        expr: arg,
                        path: cur.path.clone(),
                        env: Default::default(),
                    };
                    candidates.push((Some(draft), next));
                }
                None => missing = true,
            }
        }
        if let Some(default) = default.filter(|_| missing || calls.is_empty()) {
            let note = format!("`{param}` defaults to `{}`", made::text_of(m.file.text(), default));
            let draft = self.draft(m, default.start(), Role::Move, note);
            candidates.push((
                Some(draft),
                Cursor { scope: m.sem.scopes[fn_scope].parent.unwrap_or(MODULE), ..cur.at(default) },
            ));
        }
        if candidates.is_empty() {
            if let Some(found) = self.batch_from_runtime(cur, param) {
                return found;
            }
            return self.end(cur, used, format!("`{param}` is a parameter of `{function}` whose callers were not found; not followed further"));
        }
        if candidates.len() > MAX_CALLERS {
            return self.end(
                cur,
                used,
                format!(
                    "`{param}` is a parameter of `{function}`, called from {} places; not followed further",
                    candidates.len()
                ),
            );
        }
        self.fork(cur, used, &format!("the callers of `{function}`"), candidates)
    }

    /// The caller's argument, when the runtime stack shows which call ran.
    pub(super) fn runtime_caller(
        &self,
        cur: &Cursor<'a>,
        fn_scope: ScopeId,
        def: &'a ast::StmtFunctionDef,
        index: usize,
        param: &'a str,
        method: bool,
    ) -> Option<Outcome<'a>> {
        let frames = &self.query.frames;
        let m = cur.m;
        let k = frames.iter().position(|f| {
            super::follow::same_file(&f.file, m.path) && {
                let line = f.line;
                let start = m.file.line_of(def.start());
                let end = m.file.line_of(def.end());
                line > start && line <= end && m.index.scope_at(line_offset(m, line)) == fn_scope
            }
        })?;
        let caller = frames.get(k + 1)?;
        let cm = self.project.module(&caller.file)?;
        let offset = line_offset(cm, caller.line);
        let stmt = cm.index.statement_at(offset)?;
        let cscope = cm.index.scope_at(offset);
        let calls = marked(super::calls::calls_in(stmt), frame_range(cm, caller));
        let function = super::project::Project::function_name(m, fn_scope);
        let init = def.name.as_str() == "__init__";
        let runs_it = |call: &&&'a ast::ExprCall| match self.project.resolve(cm, cscope, &call.func) {
            Some(Object::Function(fm, s) | Object::Method(fm, s)) => std::ptr::eq(fm, m) && s == fn_scope,
            Some(Object::Class(fm, c)) | Some(Object::Instance(fm, c, _)) => {
                std::ptr::eq(fm, m)
                    && self
                        .project
                        .method_of(fm, c, if init { "__init__" } else { "forward" })
                        .is_some_and(|(mm, s)| std::ptr::eq(mm, m) && s == fn_scope)
            }
            _ => false,
        };
        let call: &'a ast::ExprCall = match calls.iter().filter(runs_it).collect::<Vec<_>>().as_slice() {
            [one] => one,
            _ => {
                // The line ran this function; one call on it that is not a library's is it.
                let own: Vec<_> = calls
                    .iter()
                    .filter(|c| {
                        !matches!(
                            self.project.resolve(cm, cscope, &c.func),
                            Some(Object::Api(..)) | Some(Object::LibraryInstance(..))
                        )
                    })
                    .collect();
                match own.as_slice() {
                    [one] if def.name.as_str() == "forward" || def.name.as_str() == "__call__" => one,
                    _ => return None,
                }
            }
        };
        let position = super::calls::param_position(index, method);
        let arg = crate::semantic::argument(call, param, position)?;
        let note = format!("passed as `{param}` to `{function}`");
        let mut draft = self.draft(cm, arg.start(), Role::Move, note);
        draft.confirmed = true;
        let next =
            Cursor { m: cm, scope: cscope, expr: arg, path: cur.path.clone(), env: Default::default() };
        Some(self.then(draft, next))
    }

    /// A batch parameter no call site passes (a Lightning `training_step`): when the
    /// runtime saw the value come out of a DataLoader over a user dataset class, one
    /// sample of that class.
    pub(super) fn batch_from_runtime(&self, cur: &Cursor<'a>, param: &str) -> Option<Outcome<'a>> {
        let _ = param;
        let (class, file, _) = self.query.observed.datasets.iter().rev().find(|(_, f, _)| f.is_some())?;
        let dm = self.project.module(file.as_ref()?)?;
        let &class_id = dm.sem.class_by_name.get(class.as_str())?;
        let mut path = vec![Sel::Sample];
        path.extend(cur.path.iter().cloned());
        Some(self.sample_of_class(cur, dm, class_id, None, path, true))
    }

    /// The call sites of a function in the project: this module's, then other modules'
    /// that import it.
    pub fn callers(
        &self,
        m: &'a Module<'a>,
        fn_scope: ScopeId,
    ) -> Vec<(&'a Module<'a>, ScopeId, &'a ast::ExprCall)> {
        let ScopeKind::Function { def, class } = m.sem.scopes[fn_scope].kind else { return Vec::new() };
        let name = def.name.as_str();
        let callee_names: Vec<&str> = match (class, name) {
            (Some(c), "__init__") => vec![m.sem.classes[c].def.name.as_str()],
            (Some(c), "forward" | "__call__") => return self.instance_callers(m, c, fn_scope),
            _ => vec![name],
        };
        let mut found = Vec::new();
        let mut modules = vec![m];
        for path in self.project.project_files() {
            if super::follow::same_file(&path, m.path) || callee_names.is_empty() {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            if callee_names.iter().any(|n| text.contains(n)) {
                if let Some(other) = self.project.module(&path) {
                    modules.push(other);
                }
            }
        }
        for module in modules {
            for callee in &callee_names {
                for site in module.sem.calls_of(callee).take(MAX_SITES) {
                    let runs = match self.project.resolve(module, site.scope, &site.call.func) {
                        Some(Object::Function(fm, s) | Object::Method(fm, s)) => {
                            std::ptr::eq(fm, m) && s == fn_scope
                        }
                        Some(Object::Class(fm, c)) => std::ptr::eq(fm, m) && class == Some(c),
                        _ => false,
                    };
                    if runs {
                        found.push((module, site.scope, site.call));
                    }
                }
            }
        }
        found
    }

    /// The calls of instances of a class (which run its `forward`): `model(x)` where
    /// `model` is built from it, in its module or a module that imports the class.
    pub(super) fn instance_callers(
        &self,
        m: &'a Module<'a>,
        class: ClassId,
        fn_scope: ScopeId,
    ) -> Vec<(&'a Module<'a>, ScopeId, &'a ast::ExprCall)> {
        let class_name = m.sem.classes[class].def.name.as_str();
        let mut modules = vec![m];
        for path in self.project.project_files() {
            if super::follow::same_file(&path, m.path) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            if text.contains(class_name) {
                if let Some(other) = self.project.module(&path) {
                    modules.push(other);
                }
            }
        }
        let mut found = Vec::new();
        for module in modules {
            for site in module.sem.calls.iter().take(MAX_SITES * 16) {
                if matches!(&*site.call.func, Expr::Name(n) if n.id.as_str() == "self") {
                    continue;
                }
                let runs = match self.project.resolve(module, site.scope, &site.call.func) {
                    Some(Object::Instance(cm, c, _)) => self
                        .project
                        .method_of(cm, c, "forward")
                        .is_some_and(|(fm, s)| std::ptr::eq(fm, m) && s == fn_scope),
                    _ => false,
                };
                if runs {
                    found.push((module, site.scope, site.call));
                }
            }
        }
        let _ = class;
        found
    }
}
