//! Calls: what a call's value is made of. A move (`.to(device)`, `torch.tensor(x)`,
//! `.view(-1)`) carries its input's values; a user function (`returns`) returns one of its `return`
//! values (its parameters bound to this call's arguments); a DataLoader's batch is a
//! collate of its dataset's samples; a computing call (`randint`, `len`, `.get(k, -1)`,
//! `int(text)`, `torch.log`) made the value.

use super::follow::{Alias, Cursor, Outcome, Sel, Walker};
use super::made::{self, Values};
use super::project::Module;
use super::query::Role;
use super::resolve::{Built, Object};
use crate::semantic::{argument, ScopeId};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextSize};
use std::rc::Rc;

/// Methods that give the same values, on the same positions.
const SAME_VALUES: &[&str] = &[
    "to",
    "cuda",
    "cpu",
    "long",
    "int",
    "float",
    "double",
    "half",
    "bfloat16",
    "short",
    "byte",
    "char",
    "type",
    "astype",
    "contiguous",
    "clone",
    "detach",
    "numpy",
    "tolist",
    "item",
    "pin_memory",
    "copy",
    "requires_grad_",
    "to_numpy",
    "to_list",
    "as_subclass",
    "share_memory_",
    "detach_",
    "to_dense",
    "cpu_",
    "squeeze_",
];
/// Methods that give the same values on other positions.
const RESHAPES: &[&str] = &[
    "view",
    "reshape",
    "squeeze",
    "unsqueeze",
    "flatten",
    "ravel",
    "permute",
    "transpose",
    "t",
    "view_as",
    "reshape_as",
    "expand",
    "expand_as",
    "repeat",
    "repeat_interleave",
    "unsqueeze_",
    "swapaxes",
    "movedim",
    "flip",
    "roll",
    "tile",
    "unflatten",
    "narrow",
    "chunk",
    "split",
];

impl<'p, 'a> Walker<'p, 'a> {
    pub fn call(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall) -> Outcome<'a> {
        let m = cur.m;
        // `self.method(…)` in a method entered through a known instance: its class's method
        // (a subclass may define what its base class calls).
        if let Expr::Attribute(attr) = &*call.func {
            if let Some((cm, class, built)) = self.receiver(cur, &attr.value) {
                if let Some((fm, fs)) = self.project.method_of(cm, class, attr.attr.as_str()) {
                    return self.returns(cur, call, fm, fs, true, Some((cm, class, built)));
                }
            }
        }
        match self.project.resolve(m, cur.scope, &call.func) {
            Some(Object::Api(root, name)) => self.api_call(cur, call, root, name),
            Some(Object::Function(fm, fs)) => self.returns(cur, call, fm, fs, false, None),
            Some(Object::Method(fm, fs)) => self.returns(cur, call, fm, fs, true, None),
            Some(Object::Lambda(lm, ls, lambda)) => self.lambda(cur, call, lm, ls, lambda),
            Some(Object::Class(cm, class)) => {
                let built = Built { m, scope: cur.scope, call };
                if cur.first() == Some(&Sel::Sample) {
                    return self.sample_of_class(cur, cm, class, Some(built), cur.path.clone(), false);
                }
                let name = &cm.sem.classes[class].def.name;
                self.end(cur, call.start(), format!("an instance of `{name}`; not followed further"))
            }
            Some(Object::Instance(cm, class, built)) => match self
                .project
                .method_of(cm, class, "forward")
                .or_else(|| self.project.method_of(cm, class, "__call__"))
            {
                Some((fm, fs)) => self.returns(cur, call, fm, fs, true, built.map(|b| (cm, class, b))),
                None => self.end(cur, call.start(), "a call of an object not followed further"),
            },
            Some(Object::LibraryInstance(_, class, _)) => {
                let text = made::text_of(m.file.text(), &call.func);
                self.end(
                    cur,
                    call.start(),
                    format!("the output of `{text}` (a `{class}`); not followed further"),
                )
            }
            Some(Object::Module(_)) => {
                self.end(cur, call.start(), "a call of a module; not followed further")
            }
            None => match &*call.func {
                Expr::Attribute(attr) if stored_callable(m, cur.scope, attr) => {
                    self.through_callee(cur, call)
                }
                Expr::Attribute(attr) => self.method_call(cur, call, attr),
                _ => self.through_callee(cur, call),
            },
        }
    }

    /// A call whose callee is a value (a function stored in an attribute, a transform
    /// passed as a parameter): the callee is followed to the function it holds.
    fn through_callee(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall) -> Outcome<'a> {
        let id = self.remember_call(cur, call);
        let text = made::text_of(cur.m.file.text(), &call.func);
        let draft = self.draft(cur.m, call.start(), Role::Move, format!("returned by `{text}(…)`"));
        let next = cur.at(&call.func).with_path(cur.prefixed(&[Sel::Returned(id)]));
        self.then(draft, next)
    }

    /// A method called on a value the analysis cannot name: by what the method does.
    fn method_call(
        &self,
        cur: &Cursor<'a>,
        call: &'a ast::ExprCall,
        attr: &'a ast::ExprAttribute,
    ) -> Outcome<'a> {
        let m = cur.m;
        let method = attr.attr.as_str();
        let at = call.start();
        let receiver = cur.at(&attr.value);
        let text = made::text_of(m.file.text(), cur.expr);
        let args = &call.arguments.args;
        if let Some(found) = self.prepared(cur, call) {
            return found;
        }
        if SAME_VALUES.contains(&method) {
            let note = match method {
                "to" | "cuda" | "cpu" | "pin_memory" => "moved to the device".to_string(),
                "clone" | "detach" | "contiguous" | "copy" | "detach_" => "copied".to_string(),
                "numpy" | "tolist" | "item" | "to_numpy" | "to_list" => format!("converted by `.{method}()`"),
                _ => format!("cast by `.{method}(…)`"),
            };
            return self.then(self.draft(m, at, Role::Move, note), receiver);
        }
        if RESHAPES.contains(&method) {
            let next = receiver.with_path(reshaped(&cur.path));
            return self.then(self.draft(m, at, Role::Move, format!("reshaped by `.{method}(…)`")), next);
        }
        match method {
            "get" | "setdefault" | "pop" if !args.is_empty() => self.lookup(cur, call, attr, method),
            "items" => match cur.path.get(1) {
                Some(Sel::Index(0)) => {
                    self.read(cur, at, receiver.with_path(with_first(&cur.path, 2, Sel::Iter)))
                }
                Some(Sel::Index(1)) => {
                    self.read(cur, at, receiver.with_path(with_first(&cur.path, 2, Sel::Elem)))
                }
                _ => self.end(cur, at, format!("`{text}`: not followed further")),
            },
            "values" => self.read(cur, at, receiver.with_path(with_first(&cur.path, 1, Sel::Elem))),
            "keys" => self.read(cur, at, receiver.with_path(with_first(&cur.path, 1, Sel::Iter))),
            "scatter" => match self.scatter_of_permutation(cur, call, &attr.value) {
                Some(found) => found,
                None => self.end(cur, at, format!("`{text}` is a call the analysis does not follow")),
            },
            "masked_fill" | "fill" | "index_fill" if !args.is_empty() => {
                let value = args.last().unwrap();
                let sides = vec![(None, receiver.clone()), (None, cur.at(value))];
                self.fork(cur, at, &format!("`{text}`"), sides)
            }
            "topk" | "sort" | "max" | "min" | "kthvalue" | "mode"
                if matches!(cur.first(), Some(Sel::Index(1))) =>
            {
                self.made(cur, at, format!("indices chosen by `{text}`"), Values::Range(Some(0.0), None))
            }
            // `values, indices = x.sort(…)`: the values are `x`'s own, reordered or picked.
            "topk" | "sort" | "kthvalue" | "mode" | "max" | "min"
                if matches!(cur.first(), Some(Sel::Index(0))) && !(args.is_empty() && method != "sort") =>
            {
                self.selected_values(cur, call, attr)
            }
            m if made::index_maker(m) => {
                self.made(cur, at, format!("indices chosen by `{text}`"), Values::Range(Some(0.0), None))
            }
            // A random generator's draw (`rng.integers(0, 4, size=…)`, `random.randint(…)`).
            "integers" | "randint" => {
                let numbers =
                    args.iter().take_while(|a| !matches!(a, Expr::Tuple(_) | Expr::List(_))).count().min(2);
                let values =
                    made::bounded(&args[..numbers], method == "randint" && !is_numpy(cur, attr), &|e| {
                        self.constant(cur, e)
                    });
                self.made(cur, at, format!("drawn at random by `{text}`"), values)
            }
            m if made::creator(m).is_some() => {
                self.made(cur, at, format!("`{text}`: {}", made::creator(m).unwrap_or("")), Values::Unknown)
            }
            m if made::reduction(m) => {
                self.made(cur, at, format!("`{text}` computes it from the data"), Values::Unknown)
            }
            "clamp" | "clip" | "round" | "floor" | "ceil" | "abs" | "neg" | "add" | "sub" | "mul" | "div"
            | "remainder" | "fmod" | "pow" | "sqrt" | "exp" | "log" | "softmax" | "log_softmax"
            | "sigmoid" | "cumsum" | "diff" => {
                let why = made::non_finite(method).map_or(String::new(), |w| format!(": {w}"));
                self.made(cur, at, format!("`{text}` computes it{why}"), made::values_of(method))
            }
            "split" | "strip" | "rstrip" | "lstrip" | "read" | "readline" | "readlines" | "decode"
            | "lower" | "upper" => self.end(cur, at, format!("text from `{text}`; not followed further")),
            _ => self.end(cur, at, format!("`{text}` is a call the analysis does not follow")),
        }
    }

    /// The values element 0 of `x.sort(…)`, `x.topk(…)`, `x.max(dim)` holds: `x`'s own.
    fn selected_values(
        &self,
        cur: &Cursor<'a>,
        call: &'a ast::ExprCall,
        attr: &'a ast::ExprAttribute,
    ) -> Outcome<'a> {
        let m = cur.m;
        let receiver = cur.at(&attr.value).with_path(reshaped(&cur.rest()));
        let note = format!(
            "the values of `{}`, taken by `.{}(…)`",
            made::text_of(m.file.text(), &attr.value),
            attr.attr
        );
        self.then(self.draft(m, call.start(), Role::Move, note), receiver)
    }

    /// What `accelerator.prepare(…)` or Fabric's `setup(…)` was given (see
    /// [`Project::prepared_argument`]): a prepared DataLoader yields the same batches.
    fn prepared(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall) -> Option<Outcome<'a>> {
        let (element, path) = match cur.first() {
            Some(Sel::Index(i)) if call.arguments.args.len() > 1 => {
                (Some(usize::try_from(*i).ok()?), cur.rest())
            }
            _ => (None, cur.path.clone()),
        };
        let (arg, wrapper) = self.project.prepared_argument(cur.m, cur.scope, call, element)?;
        let Expr::Attribute(attr) = &*call.func else { return None };
        let text = made::text_of(cur.m.file.text(), arg);
        let note =
            format!("`{text}` as `.{}(…)` of the {wrapper} returns it, wrapped for the devices", attr.attr);
        Some(self.then(self.draft(cur.m, call.start(), Role::Move, note), cur.at(arg).with_path(path)))
    }

    fn read(&self, cur: &Cursor<'a>, at: TextSize, next: Cursor<'a>) -> Outcome<'a> {
        let text = made::text_of(cur.m.file.text(), next.expr);
        self.then(self.draft(cur.m, at, Role::Read, format!("read from `{text}`")), next)
    }

    /// `d.get(k, default)`: the default, or a value of the map.
    fn lookup(
        &self,
        cur: &Cursor<'a>,
        call: &'a ast::ExprCall,
        attr: &'a ast::ExprAttribute,
        method: &str,
    ) -> Outcome<'a> {
        let m = cur.m;
        let at = call.start();
        let map = cur.at(&attr.value).with_path(cur.prefixed(&[Sel::Elem]));
        let args = &call.arguments.args;
        let default = match method {
            "get" | "pop" => args.get(1),
            _ => args.get(1),
        };
        let read = self.read(cur, at, map);
        let Some(default) = default else { return read };
        let text = made::text_of(m.file.text(), cur.expr);
        let key = made::text_of(m.file.text(), &args[0]);
        let fallback = if let Some(v) = self.constant(cur, default).filter(|_| !made::is_constant(default)) {
            let value = made::text_of(m.file.text(), default);
            let note =
                format!("`{text}` gives `{value}` ({}) for a `{key}` missing from the map", made::show(v));
            self.made(cur, at, note, Values::exactly(v))
        } else if made::is_constant(default) {
            let value = made::text_of(m.file.text(), default);
            let note = format!("`{text}` gives {value} for a `{key}` missing from the map");
            self.made(cur, at, note, made::constant_values(default))
        } else {
            let note = format!(
                "`{text}` falls back to `{}` for a `{key}` missing from the map",
                made::text_of(m.file.text(), default)
            );
            self.then(self.draft(m, at, Role::Read, note), cur.at(default))
        };
        self.pick(cur, at, &format!("`{text}`"), vec![fallback, read])
    }
}

/// Whether a receiver is numpy's (whose `randint` excludes its upper bound, unlike `random`'s).
pub(super) fn is_numpy(cur: &Cursor<'_>, attr: &ast::ExprAttribute) -> bool {
    cur.m.sem.api(&attr.value).is_some_and(|(root, _)| root == "numpy")
        || !matches!(&*attr.value, Expr::Name(n) if n.id.as_str() == "random")
}

/// `self.transform(x)` where `self.transform` is an attribute the class stores (not a
/// method): a callable value, followed to the function it holds.
fn stored_callable(m: &Module<'_>, scope: ScopeId, attr: &ast::ExprAttribute) -> bool {
    let Expr::Name(base) = &*attr.value else { return false };
    base.id.as_str() == "self"
        && m.sem.class_of(scope).is_some_and(|c| m.sem.classes[c].attrs.contains_key(attr.attr.as_str()))
}

/// The position of parameter `index` (counting `self`) among a call's positional
/// arguments: a method's call does not pass `self`, nor a class's call its `__init__`'s.
pub fn param_position(index: usize, method: bool) -> Option<usize> {
    if method {
        index.checked_sub(1)
    } else {
        Some(index)
    }
}

/// The calls a statement makes, outermost first.
pub fn calls_in(stmt: &Stmt) -> Vec<&ast::ExprCall> {
    use ruff_python_ast::visitor::{self, Visitor};
    struct Calls<'b>(Vec<&'b ast::ExprCall>);
    impl<'b> Visitor<'b> for Calls<'b> {
        fn visit_expr(&mut self, expr: &'b Expr) {
            if let Expr::Call(call) = expr {
                self.0.push(call);
            }
            visitor::walk_expr(self, expr);
        }
        fn visit_stmt(&mut self, stmt: &'b Stmt) {
            // The statement's own expressions, not those of a body it holds.
            match stmt {
                Stmt::For(f) => self.visit_expr(&f.iter),
                Stmt::If(i) => self.visit_expr(&i.test),
                Stmt::While(w) => self.visit_expr(&w.test),
                Stmt::With(w) => w.items.iter().for_each(|i| self.visit_expr(&i.context_expr)),
                Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
                other => visitor::walk_stmt(self, other),
            }
        }
    }
    let mut calls = Calls(Vec::new());
    calls.visit_stmt(stmt);
    calls.0
}

/// The path after a reshape: a literal position no longer names the same element.
pub fn reshaped(path: &[Sel]) -> Vec<Sel> {
    path.iter()
        .enumerate()
        .map(|(i, s)| match s {
            Sel::Index(_) if i == 0 => Sel::Elem,
            other => other.clone(),
        })
        .collect()
}

/// The path of a container's elements, for a conversion to a list of them.
pub(super) fn elems(path: &[Sel]) -> Vec<Sel> {
    path.to_vec()
}

/// `path` with its first `n` selectors replaced by `sel`.
fn with_first(path: &[Sel], n: usize, sel: Sel) -> Vec<Sel> {
    let mut out = vec![sel];
    out.extend(path.iter().skip(n).cloned());
    out
}

pub(super) fn short_call(name: &str) -> String {
    format!("{name}(…)")
}

/// A lambda's parameters bound to a call's arguments, around its body.
pub fn lambda_env<'a>(
    cur: &Cursor<'a>,
    lambda: &'a ast::ExprLambda,
    call: &'a ast::ExprCall,
    caller: &Cursor<'a>,
) -> Rc<Vec<Alias<'a>>> {
    let mut env = (*cur.env).clone();
    if let Some(params) = &lambda.parameters {
        for (index, param) in params.iter_non_variadic_params().enumerate() {
            let name = param.parameter.name.as_str();
            let Some(arg) = argument(call, name, Some(index)) else { continue };
            let to = Cursor { expr: arg, path: Vec::new(), ..caller.clone() };
            env.push(Alias {
                m: cur.m,
                within: lambda.range,
                name,
                to,
                sel: Vec::new(),
                samples: false,
                param: false,
            });
        }
    }
    Rc::new(env)
}
