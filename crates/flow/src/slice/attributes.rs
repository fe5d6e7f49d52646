//! Attributes: `self.labels` read in a method is one of the stores of `labels` in its class
//! (or the class of the instance the method was entered through, or a base class), with
//! the changes made to it; `obj.attr` of a user class's instance or a local module; a
//! configuration's field. `__init__`'s parameters and `self` are bound to the call that
//! built the instance, when the trail came through it.

use super::follow::{Alias, Cursor, Draft, Outcome, Sel, Walker};
use super::index::Holder;
use super::made::{self, Values};
use super::names::{operator_text, statement_start};
use super::project::Module;
use super::query::Role;
use super::resolve::Object;
use crate::semantic::{Bound, ClassId, ScopeId, MODULE};
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextSize};

impl<'p, 'a> Walker<'p, 'a> {
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
                let mut unfollowed = Vec::new();
                for (store_scope, binding) in stores {
                    // `self.x, self.y = f()`: element i of the value, as a path.
                    let mut elements = Vec::new();
                    let mut bound = &binding.value;
                    while let Bound::Element(inner, i) = bound {
                        elements.insert(0, Sel::Index(*i as i64));
                        bound = inner;
                    }
                    let Bound::Value(value) = bound else {
                        if let Some(aug) = km.index.augmented.get(&binding.offset) {
                            let note = format!(
                                "`self.{field} {}= {}` changes every value",
                                operator_text(aug.op),
                                made::text_of(km.file.text(), &aug.value)
                            );
                            return self.made(cur, aug.start(), note, Values::Unknown);
                        }
                        unfollowed.push(statement_start(km, binding.offset));
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
                    elements.extend(cur.path.iter().cloned());
                    let next = Cursor {
                        m: km,
                        scope: *store_scope,
                        expr: value,
                        path: elements,
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
                // A store the walk cannot take (`with … as self.x`, a loop target): a source
                // it does not know, so the trail may end there but never drops it.
                for store_at in unfollowed {
                    let note = format!("`self.{field}` is set here in a way not followed further");
                    outcomes.push(self.end(&km_cur, store_at, note));
                }
                self.mutations(&km_cur, &holder, None, at, false, &mut outcomes);
                let outcome = self.choose(cur, at, &format!("self.{field}"), outcomes);
                return self.read_step(cur, at, field, live, outcome);
            }
            if let Some(found) = self.property(cur, km, k, field, at) {
                return found;
            }
            current = self.project.user_base(km, k);
        }
        self.end(cur, at, format!("`self.{field}` is not set in `{class_name}`; not followed further"))
    }

    /// A `@property`: reading it runs the getter, whose returns are the value.
    fn property(
        &self,
        cur: &Cursor<'a>,
        km: &'a Module<'a>,
        class: ClassId,
        field: &str,
        at: TextSize,
    ) -> Option<Outcome<'a>> {
        let &getter = km.sem.classes[class].methods.get(field)?;
        if !is_property(km, getter) {
            return None;
        }
        let note = format!("`{field}` is a property: its getter's value");
        let draft = self.draft(cur.m, at, Role::Move, note);
        let getter_cur = Cursor { m: km, ..cur.clone() };
        Some(self.function_returns(&getter_cur, km, getter, cur.env.clone()).prepend(Some(draft)))
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
        env.push(Alias::parameter(fm, def.range, first.parameter.name.as_str(), to));
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
            let position = super::calls::param_position(index, true);
            let Some(arg) = crate::semantic::argument(built.call, name, position) else { continue };
            let to = Cursor {
                m: built.m,
                scope: built.scope,
                expr: arg,
                path: Vec::new(),
                env: Default::default(),
            };
            env.push(Alias::parameter(im, def.range, name, to));
        }
    }
}

/// Whether a method is a property getter (`@property`, `@functools.cached_property`).
fn is_property(m: &Module<'_>, method: ScopeId) -> bool {
    let crate::semantic::ScopeKind::Function { def, .. } = m.sem.scopes[method].kind else { return false };
    def.decorator_list.iter().any(|d| match &d.expression {
        Expr::Name(n) => matches!(n.id.as_str(), "property" | "cached_property"),
        Expr::Attribute(a) => a.attr.as_str() == "cached_property",
        _ => false,
    })
}
