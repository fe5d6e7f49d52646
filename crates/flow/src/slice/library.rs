//! Library calls, by what they do to a value: conversions and joins carry it; creators,
//! counters, random draws, parses of raw text, sizes and functions that can give inf or
//! NaN make it; `enumerate`, `zip`, `map`, `iter`/`next`, progress bars and padding pass
//! one part of it on.

use super::calls::{elems, reshaped, short_call};
use super::follow::{Alias, Cursor, Outcome, Sel, Walker};
use super::made::{self, Values};
use super::project::Module;
use super::query::Role;
use super::resolve::Object;
use crate::semantic::{argument, Bound, ScopeId, ScopeKind};
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;
use std::rc::Rc;

/// Functions of torch or numpy that carry their first argument's values.
const CONVERSIONS: &[&str] = &[
    "tensor",
    "as_tensor",
    "from_numpy",
    "LongTensor",
    "IntTensor",
    "FloatTensor",
    "DoubleTensor",
    "Tensor",
    "array",
    "asarray",
    "ascontiguousarray",
    "asanyarray",
    "squeeze",
    "unsqueeze",
    "flatten",
    "reshape",
    "transpose",
    "permute",
    "clone",
    "atleast_1d",
    "atleast_2d",
    "ravel",
    "int64",
    "int32",
    "float32",
    "long",
];

/// Functions that join several arrays: the values are those of the elements of their first argument.
const JOINS: &[&str] =
    &["stack", "cat", "concat", "concatenate", "hstack", "vstack", "column_stack", "dstack", "row_stack"];

impl<'p, 'a> Walker<'p, 'a> {
    /// A library API called: a conversion, a join, a creator, a counter, a parse, a loader.
    pub(super) fn api_call(
        &self,
        cur: &Cursor<'a>,
        call: &'a ast::ExprCall,
        root: &str,
        name: &str,
    ) -> Outcome<'a> {
        let m = cur.m;
        let at = call.start();
        let args = &call.arguments.args;
        let first = || args.first().filter(|a| !a.is_starred_expr());
        let text = made::text_of(m.file.text(), cur.expr);
        if let Some(found) = self.loader_call(cur, call, root, name) {
            return found;
        }
        if let Some(found) = self.builtin_call(cur, call, root, name) {
            return found;
        }
        if let Some(how) = made::parser(root, name) {
            return self.made(cur, at, format!("`{text}` {how}"), Values::Unknown);
        }
        if matches!(root, "tqdm" | "rich" | "progressbar" | "alive_progress")
            || matches!(name, "tqdm" | "track")
        {
            return match name {
                "trange" => self.made(
                    cur,
                    at,
                    format!("counted by `{text}`"),
                    made::bounded(args, false, &|e| self.constant(cur, e)),
                ),
                _ => first().map_or(Outcome::Dead, |a| self.follow(cur.at(a))),
            };
        }
        if !matches!(root, "torch" | "numpy" | "builtins" | "random" | "math" | "scipy" | "pandas") {
            return self.end(cur, at, format!("`{text}` is a library call; not followed further"));
        }
        if CONVERSIONS.contains(&name) {
            let Some(arg) = first() else {
                return self.made(cur, at, format!("`{text}` makes it"), Values::Unknown);
            };
            let path = if matches!(
                name,
                "tensor"
                    | "as_tensor"
                    | "from_numpy"
                    | "array"
                    | "asarray"
                    | "LongTensor"
                    | "IntTensor"
                    | "FloatTensor"
                    | "Tensor"
            ) {
                cur.path.clone()
            } else {
                reshaped(&cur.path)
            };
            let note = format!("made a tensor by `{}`", short_call(name));
            return self.then(self.draft(m, at, Role::Move, note), cur.at(arg).with_path(path));
        }
        if JOINS.contains(&name) {
            let Some(arg) = first() else { return Outcome::Dead };
            let next = cur.at(arg).with_path(cur.prefixed(&[Sel::Elem]));
            return self
                .then(self.draft(m, at, Role::Move, format!("joined by `{}`", short_call(name))), next);
        }
        match name {
            "pad_sequence" | "pad" => return self.padded(cur, call, name),
            "where" if args.len() == 3 => {
                let sides = vec![(None, cur.at(&args[1])), (None, cur.at(&args[2]))];
                return self.fork(cur, at, &format!("`{text}`"), sides);
            }
            "full" | "full_like" => {
                let Some(value) = argument(call, "fill_value", Some(1)) else { return Outcome::Dead };
                if made::is_constant(value) {
                    return self.made(
                        cur,
                        at,
                        format!("`{text}` fills it with a constant"),
                        made::constant_values(value),
                    );
                }
                let note = format!("filled by `{}`", short_call(name));
                return self.then(self.draft(m, at, Role::Move, note), cur.at(value).with_path(Vec::new()));
            }
            "zeros" | "zeros_like" => {
                return self.made(cur, at, format!("`{text}` fills it with 0"), Values::exactly(0.0))
            }
            "ones" | "ones_like" => {
                return self.made(cur, at, format!("`{text}` fills it with 1"), Values::exactly(1.0))
            }
            "randint" | "integers" => {
                let numbers =
                    args.iter().take_while(|a| !matches!(a, Expr::Tuple(_) | Expr::List(_))).count().min(2);
                let values = made::bounded(&args[..numbers], false, &|e| self.constant(cur, e));
                let range = match values {
                    Values::Range(Some(lo), Some(hi)) => {
                        format!(": values {} to {}", made::show(lo), made::show(hi))
                    }
                    _ => String::new(),
                };
                return self.made(cur, at, format!("drawn at random by `{text}`{range}"), values);
            }
            "arange" => {
                let values = made::bounded(args, false, &|e| self.constant(cur, e));
                let from = match values {
                    Values::Range(Some(lo), _) if lo != 0.0 => format!(": it counts from {}", made::show(lo)),
                    _ => String::new(),
                };
                return self.made(cur, at, format!("counted by `{text}`{from}"), values);
            }
            "one_hot" => {
                return self.made(
                    cur,
                    at,
                    format!("`{text}` makes one-hot rows"),
                    Values::Range(Some(0.0), Some(1.0)),
                )
            }
            _ => {}
        }
        if let Some(what) = made::creator(name) {
            return self.made(cur, at, format!("`{text}`: {what}"), Values::Unknown);
        }
        if made::index_maker(name) {
            return self.made(cur, at, format!("indices chosen by `{text}`"), Values::Range(Some(0.0), None));
        }
        if let Some(why) = made::non_finite(name) {
            return self.made(cur, at, format!("`{text}` {why}"), made::values_of(name));
        }
        if made::reduction(name) {
            return self.made(cur, at, format!("`{text}` computes it from the data"), Values::Unknown);
        }
        self.end(cur, at, format!("`{text}` is a library call; not followed further"))
    }

    /// Python's builtins and `random`: parses, sizes, counters, conversions, iteration.
    fn builtin_call(
        &self,
        cur: &Cursor<'a>,
        call: &'a ast::ExprCall,
        root: &str,
        name: &str,
    ) -> Option<Outcome<'a>> {
        let m = cur.m;
        let at = call.start();
        let args = &call.arguments.args;
        let first = || args.first().filter(|a| !a.is_starred_expr());
        let text = made::text_of(m.file.text(), cur.expr);
        Some(match (root, name) {
            ("builtins", "int" | "float") => self.parse_or_cast(cur, call, name),
            ("builtins", "len") => self.made(
                cur,
                at,
                format!("`{text}` computes a size from the data"),
                Values::Range(Some(0.0), None),
            ),
            ("builtins", "list" | "tuple" | "sorted" | "reversed" | "set" | "frozenset") => {
                let Some(arg) = first() else { return Some(Outcome::Dead) };
                self.then(
                    self.draft(m, at, Role::Move, format!("made a {name}")),
                    cur.at(arg).with_path(elems(&cur.path)),
                )
            }
            ("builtins", "iter") => first().map_or(Outcome::Dead, |a| self.follow(cur.at(a))),
            ("builtins", "next") => {
                let Some(arg) = first() else { return Some(Outcome::Dead) };
                self.follow(cur.at(arg).with_path(cur.prefixed(&[Sel::Iter])))
            }
            ("builtins", "enumerate") => self.enumerate(cur, call),
            ("builtins", "zip") => self.zip(cur, call),
            ("builtins", "range") => self.made(
                cur,
                at,
                format!("counted by `{text}`"),
                made::bounded(args, false, &|e| self.constant(cur, e)),
            ),
            ("builtins", "filter") => args.get(1).map_or(Outcome::Dead, |a| self.follow(cur.at(a))),
            ("builtins", "map") => self.mapped(cur, call),
            ("builtins", "max" | "min" | "sum" | "abs" | "round") => {
                self.made(cur, at, format!("`{text}` computes it"), Values::Unknown)
            }
            ("builtins", "str" | "repr" | "format") => Outcome::Dead,
            ("random", "randint") => self.made(
                cur,
                at,
                format!("drawn by `{text}`"),
                made::bounded(args, true, &|e| self.constant(cur, e)),
            ),
            _ => return None,
        })
    }

    /// `map(f, xs)`: an element is what `f` returns for an element of `xs` (`f` a function,
    /// a lambda, or `functools.partial` of one with some parameters given).
    pub(super) fn mapped(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall) -> Outcome<'a> {
        let at = call.start();
        let text = made::text_of(cur.m.file.text(), cur.expr);
        let (Some(function), Some(items)) = (call.arguments.args.first(), call.arguments.args.get(1)) else {
            return self.end(cur, at, format!("`{text}`: not followed further"));
        };
        if !matches!(cur.first(), Some(Sel::Iter | Sel::Elem | Sel::Index(_))) {
            return self.end(cur, at, format!("the whole of `{text}`; not followed further"));
        }
        let element = cur.at(items).with_path(vec![Sel::Elem]);
        let (target, given): (&'a Expr, Option<&'a ast::ExprCall>) = match function {
            Expr::Call(partial)
                if matches!(
                    self.project.resolve(cur.m, cur.scope, &partial.func),
                    Some(Object::Api("functools", "partial"))
                ) =>
            {
                match partial.arguments.args.first() {
                    Some(f) => (f, Some(partial)),
                    None => return self.end(cur, at, format!("`{text}`: not followed further")),
                }
            }
            other => (other, None),
        };
        let rest = cur.rest();
        let note = format!("each element is made by `{}`", made::text_of(cur.m.file.text(), function));
        let outcome = match self.project.resolve(cur.m, cur.scope, target) {
            Some(Object::Function(fm, fs)) => {
                let Some(def) = fm.sem.function(fs) else { return Outcome::Dead };
                let mut env = Vec::new();
                let mut free = def
                    .parameters
                    .iter_non_variadic_params()
                    .map(|p| p.parameter.name.as_str())
                    .collect::<Vec<_>>();
                if let Some(partial) = given {
                    for (i, arg) in partial.arguments.args.iter().skip(1).enumerate() {
                        if let Some(name) = free.get(i).copied() {
                            env.push(Alias {
                                m: fm,
                                within: def.range,
                                name,
                                to: cur.at(arg).with_path(Vec::new()),
                                sel: Vec::new(),
                                samples: false,
                                param: true,
                            });
                        }
                    }
                    free.drain(..partial.arguments.args.len().saturating_sub(1).min(free.len()));
                    for keyword in &partial.arguments.keywords {
                        let Some(name) = keyword.arg.as_ref().map(|a| a.as_str()) else { continue };
                        free.retain(|f| *f != name);
                        if let Some(param) = def
                            .parameters
                            .iter_non_variadic_params()
                            .find(|p| p.parameter.name.as_str() == name)
                        {
                            let name = param.parameter.name.as_str();
                            env.push(Alias {
                                m: fm,
                                within: def.range,
                                name,
                                to: cur.at(&keyword.value).with_path(Vec::new()),
                                sel: Vec::new(),
                                samples: false,
                                param: true,
                            });
                        }
                    }
                }
                if let Some(first) = free.first().copied() {
                    env.push(Alias {
                        m: fm,
                        within: def.range,
                        name: first,
                        to: element,
                        sel: Vec::new(),
                        samples: false,
                        param: true,
                    });
                }
                let inner = Cursor { path: rest, ..cur.clone() };
                self.function_returns(&inner, fm, fs, Rc::new(env))
            }
            Some(Object::Lambda(lm, ls, lambda)) if given.is_none() => {
                let mut env = (*cur.env).clone();
                if let Some(first) =
                    lambda.parameters.as_ref().and_then(|p| p.iter_non_variadic_params().next())
                {
                    env.push(Alias {
                        m: lm,
                        within: lambda.range,
                        name: first.parameter.name.as_str(),
                        to: element,
                        sel: Vec::new(),
                        samples: false,
                        param: false,
                    });
                }
                self.follow(Cursor { m: lm, scope: ls, expr: &lambda.body, path: rest, env: Rc::new(env) })
            }
            _ => return self.end(cur, at, format!("`{text}` maps a function not followed")),
        };
        outcome.prepend(Some(self.draft(cur.m, at, Role::Move, note)))
    }

    /// `int(x)` / `float(x)`: a parse of raw text makes the value; a cast of a number
    /// carries it.
    pub(super) fn parse_or_cast(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall, name: &str) -> Outcome<'a> {
        let m = cur.m;
        let at = call.start();
        let Some(arg) = call.arguments.args.first() else {
            return self.made(cur, at, format!("`{name}()` gives 0"), Values::exactly(0.0));
        };
        let text = made::text_of(m.file.text(), cur.expr);
        if self.is_text(m, cur.scope, arg, 0) {
            return self.made(cur, at, format!("`{text}` parses it from raw text"), Values::Unknown);
        }
        self.then(self.draft(m, at, Role::Move, format!("cast by `{name}(…)`")), cur.at(arg))
    }

    /// Whether every call of a function in the project passes text for its parameter (a
    /// `parse_row(row)` helper called on the rows of a `csv.DictReader`).
    fn every_caller_passes_text(
        &self,
        m: &'a Module<'a>,
        function: ScopeId,
        index: usize,
        param: &str,
        depth: u32,
    ) -> bool {
        let ScopeKind::Function { class, .. } = m.sem.scopes[function].kind else { return false };
        let position = super::calls::param_position(index, class.is_some());
        let calls = self.callers(m, function);
        !calls.is_empty()
            && calls.len() <= 8
            && calls.iter().all(|(cm, cscope, call)| {
                argument(call, param, position).is_some_and(|arg| {
                    let arg = comprehension_source(cm, call, arg).unwrap_or(arg);
                    self.is_text(cm, *cscope, arg, depth)
                })
            })
    }

    /// Whether an expression provably holds text read from outside (a line of a file, a
    /// CSV field, a split string, `input()`).
    pub(super) fn is_text(&self, m: &'a Module<'a>, scope: ScopeId, expr: &'a Expr, depth: u32) -> bool {
        if depth > 6 {
            return false;
        }
        match expr {
            Expr::StringLiteral(_) | Expr::FString(_) => true,
            Expr::Subscript(sub) => self.is_text(m, scope, &sub.value, depth + 1),
            Expr::Call(call) => match self.project.resolve(m, scope, &call.func) {
                Some(Object::Api("builtins", "input" | "open" | "str")) => true,
                Some(Object::Api("builtins", "list" | "tuple" | "sorted" | "next" | "iter")) => {
                    call.arguments.args.first().is_some_and(|a| self.is_text(m, scope, a, depth + 1))
                }
                Some(Object::Api("csv", "reader" | "DictReader"))
                | Some(Object::Api("io", "StringIO" | "open")) => true,
                _ => matches!(&*call.func, Expr::Attribute(a) if matches!(a.attr.as_str(),
                    "split" | "rsplit" | "strip" | "lstrip" | "rstrip" | "readline" | "readlines" | "read"
                    | "read_text" | "decode" | "group" | "groups" | "splitlines" | "lower" | "upper" | "replace" | "partition")),
            },
            Expr::Name(name) => {
                let Some((s, binding)) = m.sem.lookup(scope, name.id.as_str(), name.range.start()) else {
                    return false;
                };
                let mut bound = &binding.value;
                while let Bound::Element(inner, _) = bound {
                    bound = inner;
                }
                match bound {
                    Bound::Value(v) | Bound::Item(v) => self.is_text(m, s, v, depth + 1),
                    Bound::Param { scope: function, index, name, .. } => {
                        self.every_caller_passes_text(m, *function, *index, name, depth + 1)
                    }
                    _ => false,
                }
            }
            Expr::Attribute(attr) => {
                let Expr::Name(base) = &*attr.value else { return false };
                if base.id.as_str() != "self" {
                    return false;
                }
                let Some(class) = m.sem.class_of(scope) else { return false };
                match m.sem.classes[class].attrs.get(attr.attr.as_str()).map(Vec::as_slice) {
                    Some([(s, binding)]) => match &binding.value {
                        Bound::Value(v) => self.is_text(m, *s, v, depth + 1),
                        _ => false,
                    },
                    _ => false,
                }
            }
            _ => false,
        }
    }

    pub(super) fn enumerate(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall) -> Outcome<'a> {
        let at = call.start();
        let text = made::text_of(cur.m.file.text(), cur.expr);
        let Some(Sel::Iter) = cur.first() else {
            return self.end(cur, at, format!("`{text}`: not followed further"));
        };
        match cur.path.get(1) {
            Some(Sel::Index(0)) => {
                let start = argument(call, "start", Some(1)).and_then(made::number).unwrap_or(0.0);
                let note = format!("numbered by `{text}`, from {}", made::show(start));
                self.made(cur, at, note, Values::Range(Some(start), None))
            }
            Some(Sel::Index(1)) => {
                let Some(arg) = call.arguments.args.first() else { return Outcome::Dead };
                let mut path = vec![Sel::Iter];
                path.extend(cur.path.iter().skip(2).cloned());
                self.follow(cur.at(arg).with_path(path))
            }
            _ => self.end(cur, at, format!("a whole item of `{text}`; not followed further")),
        }
    }

    pub(super) fn zip(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall) -> Outcome<'a> {
        let at = call.start();
        match (cur.first(), cur.path.get(1)) {
            (Some(Sel::Iter), Some(Sel::Index(i))) => {
                let Some(arg) = usize::try_from(*i).ok().and_then(|i| call.arguments.args.get(i)) else {
                    return Outcome::Dead;
                };
                let mut path = vec![Sel::Iter];
                path.extend(cur.path.iter().skip(2).cloned());
                self.follow(cur.at(arg).with_path(path))
            }
            _ => self.end(cur, at, "a whole item of `zip(…)`; not followed further"),
        }
    }

    /// `pad_sequence(seqs, padding_value=-1)`: the padding constant, or the sequences' values.
    pub(super) fn padded(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall, name: &str) -> Outcome<'a> {
        let m = cur.m;
        let at = call.start();
        let text = made::text_of(m.file.text(), cur.expr);
        let (padding, default) = match name {
            "pad_sequence" => (argument(call, "padding_value", Some(2)), 0.0),
            _ => (argument(call, "value", Some(3)), 0.0),
        };
        let value = padding.and_then(made::number).unwrap_or(default);
        let pad =
            self.made(cur, at, format!("`{text}` pads with {}", made::show(value)), Values::exactly(value));
        let Some(seqs) = call.arguments.args.first() else { return pad };
        let path = if name == "pad_sequence" { cur.prefixed(&[Sel::Elem]) } else { cur.path.clone() };
        let inner = self.then(
            self.draft(m, at, Role::Move, format!("padded by `{name}`")),
            cur.at(seqs).with_path(elems(&path)),
        );
        self.pick(cur, at, &format!("`{text}`"), vec![pad, inner])
    }
}

/// What a comprehension variable passed to a call iterates (`row` in
/// `[parse_row(row) for row in csv.DictReader(f)]` iterates the reader): the
/// comprehension around the call, innermost first, whose `for` binds the name.
fn comprehension_source<'a>(m: &'a Module<'a>, call: &'a ast::ExprCall, arg: &'a Expr) -> Option<&'a Expr> {
    use ruff_python_ast::visitor::{self, Visitor};
    let Expr::Name(name) = arg else { return None };
    struct Find<'a, 'n> {
        name: &'n str,
        call: ruff_text_size::TextRange,
        found: Option<&'a Expr>,
    }
    impl<'a> Visitor<'a> for Find<'a, '_> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if !expr.range().contains_range(self.call) {
                return;
            }
            let generators = match expr {
                Expr::ListComp(c) => Some(&c.generators),
                Expr::SetComp(c) => Some(&c.generators),
                Expr::Generator(c) => Some(&c.generators),
                Expr::DictComp(c) => Some(&c.generators),
                _ => None,
            };
            if let Some(generators) = generators {
                for generator in generators {
                    if matches!(&generator.target, Expr::Name(t) if t.id.as_str() == self.name) {
                        self.found = Some(&generator.iter);
                    }
                }
            }
            visitor::walk_expr(self, expr);
        }
    }
    let stmt = m.index.statement_at(call.start())?;
    let mut find = Find { name: name.id.as_str(), call: call.range(), found: None };
    find.visit_stmt(stmt);
    find.found
}
