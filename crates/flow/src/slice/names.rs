//! Names and attributes: the assignments that reach a use (the last one before it, and
//! those that may not have run or run again in a loop), the changes made to a container
//! after it was bound (`y[40] = 4`, `labels.append(v)`), a parameter's argument at the
//! call that ran (from the runtime stack) or at the project's call sites, and the stores
//! of an attribute (`self.labels = …` in `__init__`).

use super::follow::{Alias, Cursor, Draft, Outcome, Sel, Walker};
use super::index::{Holder, Mutated, Mutation};
use super::made::{self, Values};
use super::project::Module;
use super::resolve::Object;
use super::Role;
use crate::semantic::{Binding, Bound, ClassId, ScopeId, MODULE};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange, TextSize};

impl<'p, 'a> Walker<'p, 'a> {
    pub fn name(&self, cur: &Cursor<'a>, name: &'a ast::ExprName) -> Outcome<'a> {
        self.name_at(cur, name.id.as_str(), name.range.start())
    }

    /// The sources of `name` read at `at` (in `cur`'s scope).
    pub fn name_at(&self, cur: &Cursor<'a>, name: &str, at: TextSize) -> Outcome<'a> {
        if let Some(alias) = self.alias(cur, name, at, false) {
            return self.through_alias(cur, alias);
        }
        let m = cur.m;
        let Some((defining, _)) = m.sem.lookup(cur.scope, name, at) else {
            return self.end(cur, at, format!("`{name}` is not bound in this file; not followed further"));
        };
        let bindings = &m.sem.scopes[defining].bindings[name];
        let chosen = reaching(m, bindings, at, defining == cur.scope);
        let holder = Holder::Name(
            defining,
            m.sem.scopes[defining].bindings.get_key_value(name).map(|(k, _)| *k).unwrap_or(""),
        );
        let mut outcomes: Vec<Outcome<'a>> = Vec::new();
        for binding in &chosen {
            outcomes.push(self.binding(cur, defining, name, binding, at));
        }
        let after = chosen.iter().map(|b| b.offset).min();
        self.mutations(cur, &holder, after, at, defining == cur.scope, &mut outcomes);
        self.choose(cur, at, name, outcomes)
    }

    /// The outcomes of the bindings and of the mutations, as one fork.
    fn choose(
        &self,
        cur: &Cursor<'a>,
        at: TextSize,
        what: &str,
        mut outcomes: Vec<Outcome<'a>>,
    ) -> Outcome<'a> {
        if outcomes.len() == 1 {
            return outcomes.pop().unwrap();
        }
        self.pick(cur, at, &format!("`{what}`"), outcomes)
    }

    /// The alias of `name` at `at`: a comprehension's or a parameter's.
    fn alias<'c>(&self, cur: &'c Cursor<'a>, name: &str, at: TextSize, param: bool) -> Option<&'c Alias<'a>> {
        cur.env
            .iter()
            .rev()
            .find(|a| std::ptr::eq(a.m, cur.m) && a.name == name && a.within.contains(at) && a.param == param)
    }

    fn through_alias(&self, cur: &Cursor<'a>, alias: &Alias<'a>) -> Outcome<'a> {
        let mut path = alias.sel.clone();
        if alias.samples {
            // A list of samples: any one element of it is one sample.
            let rest = match cur.first() {
                Some(Sel::Index(_) | Sel::Elem | Sel::Iter) => cur.rest(),
                _ => {
                    return self.end(cur, cur.expr.start(), "the whole list of samples; not followed further")
                }
            };
            path.push(Sel::Sample);
            path.extend(rest);
        } else {
            path.extend(cur.path.iter().cloned());
        }
        self.follow(alias.to.clone().with_path(path))
    }

    /// Where one binding of `name` got its value.
    fn binding(
        &self,
        cur: &Cursor<'a>,
        scope: ScopeId,
        name: &str,
        binding: &Binding<'a>,
        used: TextSize,
    ) -> Outcome<'a> {
        let m = cur.m;
        let here = Cursor { scope, ..cur.clone() };
        let stmt_at = statement_start(m, binding.offset);
        match &binding.value {
            Bound::Value(value) => {
                let next = here.at(value);
                if matches!(value, Expr::Name(_)) {
                    return self.then(
                        self.draft(
                            m,
                            stmt_at,
                            Role::Move,
                            format!("`{name}` is a copy of `{}`", made::text_of(m.file.text(), value)),
                        ),
                        next,
                    );
                }
                self.follow(next)
            }
            Bound::Element(inner, index) => {
                let mut sel = vec![Sel::Index(*index as i64)];
                let mut bound = &**inner;
                while let Bound::Element(deeper, i) = bound {
                    sel.insert(0, Sel::Index(*i as i64));
                    bound = deeper;
                }
                let path = here.prefixed(&sel);
                match bound {
                    // `x, y = x.to(d), y.to(d)`: a parallel assignment, not an unpacking.
                    Bound::Value(value @ (Expr::Tuple(_) | Expr::List(_))) => {
                        self.follow(here.at(value).with_path(path))
                    }
                    Bound::Value(value) => {
                        let note = format!("unpacked from `{}`", made::text_of(m.file.text(), value));
                        self.then(self.draft(m, stmt_at, Role::Unpack, note), here.at(value).with_path(path))
                    }
                    Bound::Item(iter) => {
                        let mut full = vec![Sel::Iter];
                        full.extend(path);
                        let note =
                            format!("unpacked from an item of `{}`", made::text_of(m.file.text(), iter));
                        self.then(self.draft(m, stmt_at, Role::Unpack, note), here.at(iter).with_path(full))
                    }
                    _ => self.end(
                        cur,
                        stmt_at,
                        format!("`{name}` is unpacked from a value not followed further"),
                    ),
                }
            }
            Bound::Item(iter) => {
                let note = format!("an item of `{}`", made::text_of(m.file.text(), iter));
                self.then(
                    self.draft(m, stmt_at, Role::Unpack, note),
                    here.at(iter).with_path(here.prefixed(&[Sel::Iter])),
                )
            }
            Bound::Param { scope: fn_scope, index, name: param, default } => {
                if let Some(alias) = self.alias(cur, param, used, true) {
                    return self.through_alias(cur, alias);
                }
                self.parameter(&here, *fn_scope, *index, param, *default, used)
            }
            Bound::Unknown => self.unknown_binding(&here, scope, name, binding),
        }
    }

    /// Augmented assignments, imports, `with … as`: what a binding without a plain value holds.
    fn unknown_binding(
        &self,
        cur: &Cursor<'a>,
        scope: ScopeId,
        name: &str,
        binding: &Binding<'a>,
    ) -> Outcome<'a> {
        let m = cur.m;
        if let Some(aug) = m.index.augmented.get(&binding.offset) {
            let op = operator_text(aug.op);
            let operand = made::text_of(m.file.text(), &aug.value);
            let note = format!("`{name} {op}= {operand}` changes every value");
            return self.made(cur, aug.start(), note, Values::Unknown);
        }
        if m.sem.imports.contains_key(name) {
            return self.imported(cur, name);
        }
        if m.sem.function_in.contains_key(&(scope, name)) || m.sem.class_by_name.contains_key(name) {
            return Outcome::Dead;
        }
        self.end(
            cur,
            binding.offset,
            format!("`{name}` is bound by a statement not followed (`with`, `except`, `global`…)"),
        )
    }

    /// A name imported from a local module: its module-level value there.
    fn imported(&self, cur: &Cursor<'a>, name: &str) -> Outcome<'a> {
        let m = cur.m;
        let Some(from) = m.sem.imports.get(name).and_then(|i| i.from) else {
            return self.end(
                cur,
                cur.expr.start(),
                format!("`{name}` comes from a library; not followed further"),
            );
        };
        let Some(path) = crate::imports::module_path(m.path, from.level, from.module) else {
            return self.end(
                cur,
                cur.expr.start(),
                format!("`{name}` comes from a library module; not followed further"),
            );
        };
        let Some(other) = self.project.module(&path) else {
            return self.end(
                cur,
                cur.expr.start(),
                format!("`{name}` comes from {}, which cannot be read", path.display()),
            );
        };
        let end = other.file.suite().last().map_or(TextSize::default(), |s| s.end()) + TextSize::from(1);
        let there = Cursor { m: other, scope: MODULE, env: Default::default(), ..cur.clone() };
        self.name_at(&there, from.name, end)
    }

    pub fn attribute(&self, cur: &Cursor<'a>, attr: &'a ast::ExprAttribute) -> Outcome<'a> {
        let m = cur.m;
        let field = attr.attr.as_str();
        let at = attr.start();
        if let Some((cm, class, _)) = self.receiver(cur, &attr.value) {
            return self.class_attribute(cur, cm, class, field, at);
        }
        if let Expr::Name(base) = &*attr.value {
            if base.id.as_str() == "self" {
                if let Some(class) = m.sem.class_of(cur.scope) {
                    return self.class_attribute(cur, m, class, field, at);
                }
            }
        }
        match field {
            "T" | "mT" | "data" | "values" | "real" => {
                let next = cur.at(&attr.value).with_path(super::calls::reshaped(&cur.path));
                return self.follow(next);
            }
            "indices" => {
                if let Expr::Call(call) = &*attr.value {
                    let text = made::text_of(m.file.text(), &attr.value);
                    if let Expr::Attribute(method) = &*call.func {
                        if made::index_maker(method.attr.as_str()) {
                            return self.made(
                                cur,
                                at,
                                format!("indices chosen by `{text}`"),
                                Values::Range(Some(0.0), None),
                            );
                        }
                    }
                }
            }
            _ => {}
        }
        match self.project.resolve(m, cur.scope, &attr.value) {
            Some(Object::Instance(cm, class, built)) => {
                let mut env = (*cur.env).clone();
                if let Some(b) = built {
                    self.bind_init(&mut env, cm, class, b);
                }
                let inner = Cursor { env: std::rc::Rc::new(env), ..cur.clone() };
                self.class_attribute(&inner, cm, class, field, at)
            }
            Some(Object::Module(other)) => {
                let end =
                    other.file.suite().last().map_or(TextSize::default(), |s| s.end()) + TextSize::from(1);
                let there = Cursor { m: other, scope: MODULE, env: Default::default(), ..cur.clone() };
                self.name_at(&there, field, end)
            }
            _ => {
                let text = made::text_of(m.file.text(), cur.expr);
                // A configuration's field: argparse's default, a dataclass field's default
                // or the keyword its constructor got (as lint finds them).
                let (value, scope) = m.flow.origin(cur.expr, cur.scope);
                if !std::ptr::eq(value, cur.expr) {
                    let note = format!("`{text}` is set here");
                    let next = Cursor { scope, ..cur.at(value) };
                    return self.then(self.draft(m, value.start(), Role::Read, note), next);
                }
                self.end(cur, at, format!("`{text}` is an attribute of an object the analysis cannot name; not followed further"))
            }
        }
    }

    /// The stores of `self.field` in a class (and its user base classes).
    pub fn class_attribute(
        &self,
        cur: &Cursor<'a>,
        cm: &'a Module<'a>,
        class: ClassId,
        field: &str,
        at: TextSize,
    ) -> Outcome<'a> {
        let mut current = Some((cm, class));
        let class_name = cm.sem.classes[class].def.name.to_string();
        let live = self.query.observed.live.iter().any(|(c, a, bad)| *bad && a == field && *c == class_name);
        for _ in 0..8 {
            let Some((km, k)) = current else { break };
            if let Some(stores) = km.sem.classes[k].attrs.get(field) {
                let mut candidates: Vec<(Option<Draft<'a>>, Cursor<'a>)> = Vec::new();
                let single = stores.len() == 1;
                for (store_scope, binding) in stores {
                    let Bound::Value(value) = &binding.value else {
                        if let Some(aug) = km.index.augmented.get(&binding.offset) {
                            let note = format!(
                                "`self.{field} {}= {}` changes every value",
                                operator_text(aug.op),
                                made::text_of(km.file.text(), &aug.value)
                            );
                            return self.made(cur, aug.start(), note, Values::Unknown);
                        }
                        continue;
                    };
                    let stmt_at = statement_start(km, binding.offset);
                    let method = super::project::Project::function_name(km, *store_scope);
                    let mut draft = self.draft(
                        km,
                        stmt_at,
                        Role::Store,
                        format!("stored in `self.{field}` in `{method}`"),
                    );
                    draft.confirmed |= live && single;
                    draft.observed |= live && single;
                    let next = Cursor {
                        m: km,
                        scope: *store_scope,
                        expr: value,
                        path: cur.path.clone(),
                        env: cur.env.clone(),
                    };
                    candidates.push((Some(draft), next));
                }
                let holder = Holder::SelfAttr(
                    k,
                    km.sem.classes[k].attrs.get_key_value(field).map(|(n, _)| *n).unwrap_or(""),
                );
                let mut outcomes = Vec::new();
                if !candidates.is_empty() {
                    outcomes.push(self.fork(cur, at, &format!("the stores of `self.{field}`"), candidates));
                }
                let km_cur = Cursor { m: km, ..cur.clone() };
                self.mutations(&km_cur, &holder, None, at, false, &mut outcomes);
                let outcome = self.choose(cur, at, &format!("self.{field}"), outcomes);
                return self.read_step(cur, at, field, live, outcome);
            }
            current = self.project.user_base(km, k);
        }
        self.end(cur, at, format!("`self.{field}` is not set in `{class_name}`; not followed further"))
    }

    /// The read of `self.field` as a step, before the stores behind it.
    fn read_step(
        &self,
        cur: &Cursor<'a>,
        at: TextSize,
        field: &str,
        live: bool,
        outcome: Outcome<'a>,
    ) -> Outcome<'a> {
        let mut draft = self.draft(cur.m, at, Role::Move, format!("read from `self.{field}`"));
        draft.confirmed |= live;
        draft.observed |= live;
        outcome.prepend_draft(Some(draft))
    }

    /// Binds `self`, in a method entered through an instance built at a known call, to that
    /// call: `self.attr` is then looked up in the instance's own class.
    pub fn bind_self(
        &self,
        env: &mut Vec<Alias<'a>>,
        fm: &'a Module<'a>,
        fs: ScopeId,
        built: super::resolve::Built<'a>,
    ) {
        let Some(def) = fm.sem.function(fs) else { return };
        let Some(first) = def.parameters.iter_non_variadic_params().next() else { return };
        let Some(expr) = built.call_expr() else { return };
        let to = Cursor { m: built.m, scope: built.scope, expr, path: Vec::new(), env: Default::default() };
        env.push(Alias {
            m: fm,
            within: def.range,
            name: first.parameter.name.as_str(),
            to,
            sel: Vec::new(),
            samples: false,
            param: true,
        });
    }

    /// The instance `self` stands for, when the method was entered through a known one.
    pub fn receiver(
        &self,
        cur: &Cursor<'a>,
        base: &'a Expr,
    ) -> Option<(&'a Module<'a>, ClassId, super::resolve::Built<'a>)> {
        let Expr::Name(name) = base else { return None };
        let alias = self.alias(cur, name.id.as_str(), name.range.start(), true)?;
        match self.project.resolve(alias.to.m, alias.to.scope, alias.to.expr) {
            Some(Object::Instance(cm, class, Some(built))) => Some((cm, class, built)),
            _ => None,
        }
    }

    /// Binds `__init__`'s parameters to the arguments of the call that built the instance.
    pub fn bind_init(
        &self,
        env: &mut Vec<Alias<'a>>,
        cm: &'a Module<'a>,
        class: ClassId,
        built: super::resolve::Built<'a>,
    ) {
        let Some((im, init)) = self.project.method_of(cm, class, "__init__") else { return };
        let Some(def) = im.sem.function(init) else { return };
        for (index, param) in def.parameters.iter_non_variadic_params().enumerate().skip(1) {
            let name = param.parameter.name.as_str();
            let position = super::calls::param_position(built.call, index, true, true);
            let Some(arg) = crate::semantic::argument(built.call, name, position) else { continue };
            let to = Cursor {
                m: built.m,
                scope: built.scope,
                expr: arg,
                path: Vec::new(),
                env: Default::default(),
            };
            env.push(Alias {
                m: im,
                within: def.range,
                name,
                to,
                sel: Vec::new(),
                samples: false,
                param: true,
            });
        }
    }

    /// Changes to a container between its binding and the use (anywhere, for a global or
    /// an attribute), and later in a loop around the use.
    fn mutations(
        &self,
        cur: &Cursor<'a>,
        holder: &Holder<'a>,
        after: Option<TextSize>,
        used: TextSize,
        local: bool,
        out: &mut Vec<Outcome<'a>>,
    ) {
        let m = cur.m;
        let loops = m.index.loops_around(used);
        for mutated in m.index.mutations_of(holder) {
            let at = mutated.at.start();
            let reaches = if local {
                (after.is_none_or(|a| at >= a) && at < used)
                    || loops.iter().any(|l| l.contains(at) && at >= used)
            } else {
                true
            };
            if !reaches || mutated.at.contains(used) {
                continue;
            }
            if let Some(outcome) = self.mutation(cur, mutated) {
                out.push(outcome);
            }
        }
    }

    /// Where the values a mutation put in come from, for the path followed.
    fn mutation(&self, cur: &Cursor<'a>, mutated: &Mutated<'a>) -> Option<Outcome<'a>> {
        let m = cur.m;
        let at = mutated.at.start();
        let scope = m.index.scope_at(at);
        let here = |expr: &'a Expr, path: Vec<Sel>| Cursor { m, scope, expr, path, env: Default::default() };
        let stmt_text = made::text_of(m.file.text(), statement_text(mutated.stmt));
        let changes = |what: String| self.made(cur, at, what, Values::Unknown);
        let follow = |note: String, next: Cursor<'a>| self.then(self.draft(m, at, Role::Store, note), next);
        Some(match mutated.mutation {
            Mutation::ItemStore { target, value, augmented } => {
                if let (Some(Sel::Key(k)), Expr::StringLiteral(s)) = (cur.first(), &*target.slice) {
                    if s.value.to_str() != k {
                        return None;
                    }
                }
                if augmented {
                    return Some(changes(format!("`{stmt_text}` changes the values it selects")));
                }
                let path = match (cur.first(), &*target.slice) {
                    (Some(Sel::Key(_)), Expr::StringLiteral(_)) => cur.rest(),
                    _ => cur.path.iter().skip(1).cloned().collect(),
                };
                follow(format!("`{stmt_text}` stores into it"), here(value, path))
            }
            Mutation::Add { value, .. } => {
                follow(format!("`{stmt_text}` adds to it"), here(value, cur.rest()))
            }
            Mutation::Extend { values, call: Some(_) } => {
                follow(format!("`{stmt_text}` adds to it"), here(values, cur.path.clone()))
            }
            Mutation::Extend { values, call: None } => {
                follow(format!("`{stmt_text}` adds to it"), here(values, cur.path.clone()))
            }
            Mutation::InPlace { call, method } => {
                let args = &call.arguments.args;
                match method {
                    "fill_" | "index_fill_" | "masked_fill_" | "copy_" | "scatter_" | "scatter_add_"
                    | "index_put_" => match args.last() {
                        Some(v) => follow(format!("`{stmt_text}` writes into it"), here(v, cur.path.clone())),
                        None => return None,
                    },
                    _ => changes(format!("`{stmt_text}` changes it in place")),
                }
            }
        })
    }
}

/// The bindings of a name that may reach `at`: the last one before it, those before it
/// while that one may not have run, and (in a loop) those after it in the loop.
fn reaching<'b, 'a>(
    m: &Module<'a>,
    bindings: &'b [Binding<'a>],
    at: TextSize,
    innermost: bool,
) -> Vec<&'b Binding<'a>> {
    if !innermost {
        return bindings.iter().collect();
    }
    let before = bindings.partition_point(|b| b.offset <= at);
    let mut out: Vec<&Binding<'a>> = Vec::new();
    for b in bindings[..before].iter().rev() {
        out.push(b);
        if !m.index.conditional(b.offset, at) {
            break;
        }
    }
    for l in m.index.loops_around(at) {
        out.extend(bindings[before..].iter().filter(|b| l.contains(b.offset)));
    }
    if out.is_empty() {
        out.extend(bindings.iter());
    }
    out
}

/// The start of the statement a binding (at its end) belongs to.
fn statement_start(m: &Module<'_>, binding_end: TextSize) -> TextSize {
    m.index.statement_at(binding_end).map_or(binding_end, |s| match s {
        Stmt::For(f) => f.start(),
        other => other.start(),
    })
}

/// The range a frame's columns mark on its line, when it has them.
pub fn frame_range(m: &Module<'_>, frame: &super::Frame) -> Option<TextRange> {
    let (start, end) = frame.columns?;
    let span = m.file.line_span(frame.line);
    let text = &m.file.text()[span.clone()];
    let code = text.trim_start();
    let base = span.start + (text.len() - code.len());
    let byte = |chars: usize| code.char_indices().nth(chars).map_or(code.len(), |(i, _)| i);
    let (from, to) = (base + byte(start), base + byte(end));
    Some(TextRange::new(TextSize::try_from(from).ok()?, TextSize::try_from(to).ok()?))
}

/// Of several calls, those the range marks (the call it is, or calls inside it).
pub fn marked<'c>(calls: Vec<&'c ast::ExprCall>, range: Option<TextRange>) -> Vec<&'c ast::ExprCall> {
    let Some(range) = range else { return calls };
    let inside: Vec<&ast::ExprCall> =
        calls.iter().copied().filter(|c| range.contains_range(c.range())).collect();
    if inside.is_empty() {
        calls
    } else {
        inside
    }
}

/// The offset of the first non-blank character of 1-based `line`.
pub fn line_offset(m: &Module<'_>, line: usize) -> TextSize {
    let span = m.file.line_span(line);
    let text = &m.file.text()[span.clone()];
    let indent = text.len() - text.trim_start().len();
    TextSize::try_from(span.start + indent).unwrap_or_default()
}

fn operator_text(op: ast::Operator) -> &'static str {
    use ast::Operator::*;
    match op {
        Add => "+",
        Sub => "-",
        Mult => "*",
        MatMult => "@",
        Div => "/",
        Mod => "%",
        Pow => "**",
        LShift => "<<",
        RShift => ">>",
        BitOr => "|",
        BitXor => "^",
        BitAnd => "&",
        FloorDiv => "//",
    }
}

/// The expression a mutation statement is about (for its text).
fn statement_text(stmt: &Stmt) -> &Expr {
    match stmt {
        Stmt::Expr(e) => &e.value,
        Stmt::Assign(a) => a.targets.first().map_or(&*a.value, |t| t),
        Stmt::AugAssign(a) => &a.target,
        _ => unreachable_expr(),
    }
}

fn unreachable_expr() -> &'static Expr {
    static NONE: std::sync::OnceLock<Expr> = std::sync::OnceLock::new();
    NONE.get_or_init(|| {
        Expr::NoneLiteral(ast::ExprNoneLiteral {
            node_index: Default::default(),
            range: TextRange::default(),
        })
    })
}

impl<'a> Outcome<'a> {
    pub fn prepend_draft(self, draft: Option<Draft<'a>>) -> Outcome<'a> {
        self.prepend(draft)
    }
}
