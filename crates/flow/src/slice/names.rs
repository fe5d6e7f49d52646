//! Names and attributes: the assignments that reach a use (the last one before it, and
//! those that may not have run or run again in a loop), the changes made to a container
//! after it was bound (`y[40] = 4`, `labels.append(v)`), a parameter's argument at the
//! call that ran (from the runtime stack) or at the project's call sites, and the stores
//! of an attribute (`self.labels = …` in `__init__`).

use super::follow::{Alias, Cursor, Draft, Outcome, Sel, Walker};
use super::index::Holder;
use super::made::{self, Values};
use super::project::Module;

use super::query::Role;
use crate::semantic::{Binding, Bound, ScopeId, MODULE};
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
        if let Some(found) = self.lambda_parameter(cur, name, at) {
            return found;
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
    pub(super) fn choose(
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
    pub(super) fn alias<'c>(
        &self,
        cur: &'c Cursor<'a>,
        name: &str,
        at: TextSize,
        param: bool,
    ) -> Option<&'c Alias<'a>> {
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
pub(super) fn statement_start(m: &Module<'_>, binding_end: TextSize) -> TextSize {
    m.index.statement_at(binding_end).map_or(binding_end, |s| match s {
        Stmt::For(f) => f.start(),
        other => other.start(),
    })
}

/// The range a frame's columns mark on its line, when it has them.
pub fn frame_range(m: &Module<'_>, frame: &super::query::Frame) -> Option<TextRange> {
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
pub fn marked(calls: Vec<&ast::ExprCall>, range: Option<TextRange>) -> Vec<&ast::ExprCall> {
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

pub(super) fn operator_text(op: ast::Operator) -> &'static str {
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

impl<'a> Outcome<'a> {
    pub fn prepend_draft(self, draft: Option<Draft<'a>>) -> Outcome<'a> {
        self.prepend(draft)
    }
}
