//! The one pass over a module's AST that builds its model.

use super::literals::start;
use super::model::{
    Binding, Bound, CallSite, ClassId, ClassInfo, FromImport, Import, Scope, ScopeId, ScopeKind, Semantic,
    MODULE,
};
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextSize};
use rustc_hash::FxHashMap;

/// Deeper nesting than this is not analysed (real code never comes close); the parser
/// itself copes with any depth.
const MAX_DEPTH: u32 = 200;

pub fn build(suite: &[Stmt]) -> Semantic<'_> {
    let mut builder = Builder {
        sem: Semantic {
            scopes: vec![Scope { parent: None, kind: ScopeKind::Module, bindings: FxHashMap::default() }],
            classes: Vec::new(),
            class_by_name: FxHashMap::default(),
            functions: FxHashMap::default(),
            calls: Vec::new(),
            calls_by_callee: FxHashMap::default(),
            function_in: FxHashMap::default(),
            item_stores: FxHashMap::default(),
            cli_defaults: FxHashMap::default(),
            returns: FxHashMap::default(),
            assigned_to: FxHashMap::default(),
            imports: FxHashMap::default(),
            loads: FxHashMap::default(),
            truncated: false,
        },
        scope: MODULE,
        cuda_guards: 0,
        depth: 0,
    };
    builder.visit_body(suite);
    let mut sem = builder.sem;
    // `lookup` bisects: each name's bindings in offset order.
    for scope in &mut sem.scopes {
        for bindings in scope.bindings.values_mut() {
            bindings.sort_by_key(|b| b.offset);
        }
    }
    sem
}

struct Builder<'a> {
    sem: Semantic<'a>,
    scope: ScopeId,
    cuda_guards: u32,
    depth: u32,
}

impl<'a> Builder<'a> {
    fn bind(&mut self, name: &'a str, offset: TextSize, value: Bound<'a>) {
        self.sem.scopes[self.scope].bindings.entry(name).or_default().push(Binding { offset, value });
    }

    /// Binds the names of an assignment target; they are visible from `offset` on (the end
    /// of the statement: `y = y.long()` reads the previous `y`).
    fn bind_target(&mut self, target: &'a Expr, value: Bound<'a>, offset: TextSize) {
        match target {
            Expr::Name(name) => self.bind(name.id.as_str(), offset, value),
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                for (i, elt) in elts.iter().enumerate() {
                    let element = if elts.iter().any(|e| e.is_starred_expr()) {
                        Bound::Unknown
                    } else {
                        Bound::Element(Box::new(value.clone()), i)
                    };
                    self.bind_target(elt, element, offset);
                }
            }
            Expr::Starred(starred) => self.bind_target(&starred.value, Bound::Unknown, offset),
            Expr::Subscript(sub) => {
                if let (Expr::Name(container), Bound::Value(value)) = (&*sub.value, &value) {
                    self.sem.item_stores.entry((self.scope, container.id.as_str())).or_default().push(value);
                }
            }
            Expr::Attribute(attr) => {
                let Expr::Name(base) = &*attr.value else { return };
                if base.id.as_str() != "self" {
                    return;
                }
                let Some(class) = self.method_class() else { return };
                let binding = Binding { offset, value };
                self.sem.classes[class]
                    .attrs
                    .entry(attr.attr.as_str())
                    .or_default()
                    .push((self.scope, binding));
            }
            _ => {}
        }
    }

    fn note_assigned(&mut self, target: &'a Expr, value: &'a Expr) {
        let name = match target {
            Expr::Name(name) => name.id.as_str(),
            Expr::Attribute(attr) => attr.attr.as_str(),
            _ => return,
        };
        self.sem.assigned_to.insert(start(value), name);
    }

    fn method_class(&self) -> Option<ClassId> {
        match self.sem.scopes[self.scope].kind {
            ScopeKind::Function { class, .. } => class,
            _ => None,
        }
    }

    fn push_scope(&mut self, kind: ScopeKind<'a>) -> ScopeId {
        self.sem.scopes.push(Scope { parent: Some(self.scope), kind, bindings: FxHashMap::default() });
        self.sem.scopes.len() - 1
    }

    fn visit_function(&mut self, def: &'a ast::StmtFunctionDef) {
        self.bind(def.name.as_str(), def.range.start(), Bound::Unknown);
        for decorator in &def.decorator_list {
            self.visit_expr(&decorator.expression);
        }
        for param in def.parameters.iter_non_variadic_params() {
            if let Some(default) = param.default() {
                self.visit_expr(default);
            }
        }
        let class = match self.sem.scopes[self.scope].kind {
            ScopeKind::Class(c) => Some(c),
            _ => None,
        };
        let parent = self.scope;
        let scope = self.push_scope(ScopeKind::Function { def, class });
        self.sem.functions.entry(def.name.as_str()).or_default().push(scope);
        self.sem.function_in.insert((parent, def.name.as_str()), scope);
        if let Some(c) = class {
            self.sem.classes[c].methods.insert(def.name.as_str(), scope);
        }
        let outer = std::mem::replace(&mut self.scope, scope);
        let params =
            def.parameters.posonlyargs.iter().chain(&def.parameters.args).chain(&def.parameters.kwonlyargs);
        for (index, param) in params.enumerate() {
            let name = param.parameter.name.as_str();
            let value = Bound::Param { scope, index, name, default: param.default() };
            self.bind(name, param.parameter.range.start(), value);
        }
        for variadic in [&def.parameters.vararg, &def.parameters.kwarg].into_iter().flatten() {
            self.bind(variadic.name.as_str(), variadic.range.start(), Bound::Unknown);
        }
        self.visit_body(&def.body);
        self.scope = outer;
    }

    fn visit_class(&mut self, def: &'a ast::StmtClassDef) {
        self.bind(def.name.as_str(), def.range.start(), Bound::Unknown);
        for decorator in &def.decorator_list {
            self.visit_expr(&decorator.expression);
        }
        if let Some(arguments) = &def.arguments {
            self.visit_arguments(arguments);
        }
        let id = self.sem.classes.len();
        let scope = self.push_scope(ScopeKind::Class(id));
        self.sem.classes.push(ClassInfo {
            def,
            scope,
            methods: FxHashMap::default(),
            attrs: FxHashMap::default(),
        });
        self.sem.class_by_name.insert(def.name.as_str(), id);
        let outer = std::mem::replace(&mut self.scope, scope);
        self.visit_body(&def.body);
        self.scope = outer;
    }

    fn visit_import(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Import(import) => {
                for alias in &import.names {
                    let full = alias.name.as_str();
                    let (local, qualified) = match &alias.asname {
                        Some(asname) => (asname.as_str(), full.to_string()),
                        None => {
                            let root = full.split('.').next().unwrap_or(full);
                            (root, root.to_string())
                        }
                    };
                    self.sem.imports.insert(local, Import { qualified, from: None });
                    self.bind(local, alias.range.start(), Bound::Unknown);
                }
            }
            Stmt::ImportFrom(import) => {
                let module = import.module.as_ref().map_or("", |m| m.as_str());
                for alias in &import.names {
                    let local = alias.asname.as_ref().unwrap_or(&alias.name).as_str();
                    // A relative import keeps its dots, so that its root is never an API's.
                    let dots = ".".repeat(import.level as usize);
                    let qualified = format!("{dots}{module}.{}", alias.name.as_str());
                    let from = Some(FromImport { level: import.level, module, name: alias.name.as_str() });
                    self.sem.imports.insert(local, Import { qualified, from });
                    self.bind(local, alias.range.start(), Bound::Unknown);
                }
            }
            _ => {}
        }
    }
}

/// Whether an `if` test is about CUDA being there (`torch.cuda.is_available()`, `use_gpu`,
/// `provider == "CUDAExecutionProvider"`, …).
fn mentions_cuda(expr: &Expr) -> bool {
    struct Finder(bool, u32);
    impl<'b> Visitor<'b> for Finder {
        fn visit_expr(&mut self, expr: &'b Expr) {
            if self.1 > MAX_DEPTH {
                return;
            }
            let word = match expr {
                Expr::Name(n) => Some(n.id.as_str()),
                Expr::Attribute(a) => Some(a.attr.as_str()),
                // `if provider == "CUDAExecutionProvider"`, `if args.device == "cuda"`.
                Expr::StringLiteral(s) => Some(s.value.to_str()),
                _ => None,
            };
            if word.is_some_and(|w| {
                let w = w.to_ascii_lowercase();
                ["cuda", "gpu", "cpu", "is_available", "device"].iter().any(|word| w.contains(word))
            }) {
                self.0 = true;
            }
            if !self.0 {
                self.1 += 1;
                visitor::walk_expr(self, expr);
                self.1 -= 1;
            }
        }
    }
    let mut finder = Finder(false, 0);
    finder.visit_expr(expr);
    finder.0
}

impl<'a> Visitor<'a> for Builder<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if self.depth > MAX_DEPTH {
            self.sem.truncated = true;
            return;
        }
        self.depth += 1;
        match stmt {
            Stmt::FunctionDef(def) => self.visit_function(def),
            Stmt::ClassDef(def) => self.visit_class(def),
            Stmt::Import(_) | Stmt::ImportFrom(_) => self.visit_import(stmt),
            Stmt::Assign(assign) => {
                self.visit_expr(&assign.value);
                for target in &assign.targets {
                    self.note_assigned(target, &assign.value);
                    self.bind_target(target, Bound::Value(&assign.value), assign.range.end());
                    self.visit_target_parts(target);
                }
            }
            Stmt::AnnAssign(assign) => {
                if let Some(value) = &assign.value {
                    self.visit_expr(value);
                    self.note_assigned(&assign.target, value);
                    self.bind_target(&assign.target, Bound::Value(value), assign.range.end());
                }
                self.visit_target_parts(&assign.target);
            }
            Stmt::AugAssign(assign) => {
                self.visit_expr(&assign.value);
                self.visit_expr(&assign.target);
                self.bind_target(&assign.target, Bound::Unknown, assign.range.end());
            }
            Stmt::For(stmt_for) => {
                self.visit_expr(&stmt_for.iter);
                self.bind_target(
                    &stmt_for.target,
                    Bound::Item(&stmt_for.iter),
                    stmt_for.target.range().end(),
                );
                self.visit_target_parts(&stmt_for.target);
                self.visit_body(&stmt_for.body);
                self.visit_body(&stmt_for.orelse);
            }
            Stmt::With(with) => {
                for item in &with.items {
                    self.visit_expr(&item.context_expr);
                    if let Some(vars) = &item.optional_vars {
                        self.bind_target(vars, Bound::Unknown, vars.range().end());
                    }
                }
                self.visit_body(&with.body);
            }
            Stmt::Return(ret) => {
                if let Some(value) = &ret.value {
                    self.sem.returns.entry(self.scope).or_default().push(value);
                    self.visit_expr(value);
                }
            }
            Stmt::If(stmt_if) => {
                self.visit_expr(&stmt_if.test);
                // Every branch of an `if`/`elif` chain that tests for the device chose it on purpose.
                let guard = mentions_cuda(&stmt_if.test)
                    || stmt_if.elif_else_clauses.iter().filter_map(|c| c.test.as_ref()).any(mentions_cuda);
                self.cuda_guards += u32::from(guard);
                self.visit_body(&stmt_if.body);
                for clause in &stmt_if.elif_else_clauses {
                    if let Some(test) = &clause.test {
                        self.visit_expr(test);
                    }
                    self.visit_body(&clause.body);
                }
                self.cuda_guards -= u32::from(guard);
            }
            _ => visitor::walk_stmt(self, stmt),
        }
        self.depth -= 1;
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if self.depth > MAX_DEPTH {
            self.sem.truncated = true;
            return;
        }
        self.depth += 1;
        match expr {
            Expr::Call(call) => {
                let callee = match &*call.func {
                    Expr::Name(name) => Some(name.id.as_str()),
                    Expr::Attribute(attr) => Some(attr.attr.as_str()),
                    _ => None,
                };
                if let Some(callee) = callee {
                    if callee == "add_argument" {
                        self.note_cli_argument(call);
                    }
                    self.sem.calls_by_callee.entry(callee).or_default().push(self.sem.calls.len());
                }
                self.sem.calls.push(CallSite { call, scope: self.scope, cuda_guarded: self.cuda_guards > 0 });
                visitor::walk_expr(self, expr);
            }
            Expr::Name(name) => {
                if name.ctx.is_load() {
                    self.sem
                        .loads
                        .entry(name.id.as_str())
                        .or_default()
                        .push((self.scope, name.range.start()));
                }
            }
            Expr::Named(named) => {
                self.visit_expr(&named.value);
                self.bind_target(&named.target, Bound::Value(&named.value), named.range.end());
            }
            Expr::If(if_expr) => {
                self.visit_expr(&if_expr.test);
                let guard = mentions_cuda(&if_expr.test);
                self.cuda_guards += u32::from(guard);
                self.visit_expr(&if_expr.body);
                self.visit_expr(&if_expr.orelse);
                self.cuda_guards -= u32::from(guard);
            }
            _ => visitor::walk_expr(self, expr),
        }
        self.depth -= 1;
    }
}

impl<'a> Builder<'a> {
    /// `add_argument("--learning-rate", "-l", dest=…, default=…)`: argparse's destination is
    /// `dest`, else the first long option with dashes made underscores.
    fn note_cli_argument(&mut self, call: &'a ast::ExprCall) {
        let dest = match call.arguments.find_keyword("dest").map(|k| &k.value) {
            Some(Expr::StringLiteral(s)) => s.value.to_str().to_string(),
            Some(_) => return,
            None => {
                let options: Vec<&str> = call
                    .arguments
                    .args
                    .iter()
                    .filter_map(|a| match a {
                        Expr::StringLiteral(s) => Some(s.value.to_str()),
                        _ => None,
                    })
                    .collect();
                let Some(option) = options.iter().find(|o| o.starts_with("--")).or(options.first()) else {
                    return;
                };
                option.trim_start_matches('-').replace('-', "_")
            }
        };
        let default = call.arguments.find_keyword("default").map(|k| (&k.value, self.scope));
        self.sem.cli_defaults.entry(dest).or_default().push(default);
    }

    /// Visits the expressions inside an assignment target (`self.x[i] = …` reads `i`).
    fn visit_target_parts(&mut self, target: &'a Expr) {
        match target {
            Expr::Name(_) => {}
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                for elt in elts {
                    self.visit_target_parts(elt);
                }
            }
            Expr::Starred(starred) => self.visit_target_parts(&starred.value),
            Expr::Attribute(attr) => self.visit_expr(&attr.value),
            _ => self.visit_expr(target),
        }
    }
}
