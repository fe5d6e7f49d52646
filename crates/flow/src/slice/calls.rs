//! Calls: what a call's value is made of. A move (`.to(device)`, `torch.tensor(x)`,
//! `.view(-1)`) carries its input's values; a user function returns one of its `return`
//! values (its parameters bound to this call's arguments); a DataLoader's batch is a
//! collate of its dataset's samples; a computing call (`randint`, `len`, `.get(k, -1)`,
//! `int(text)`, `torch.log`) made the value.

use super::follow::{Alias, Cursor, Outcome, Sel, Walker};
use super::made::{self, Values};
use super::project::{Module, Project};
use super::resolve::{Built, Object};
use super::Role;
use crate::semantic::{argument, Bound, ClassId, ScopeId};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextSize};
use std::rc::Rc;

/// Methods that give the same values, on the same positions.
const SAME_VALUES: &[&str] = &[
    "to", "cuda", "cpu", "long", "int", "float", "double", "half", "bfloat16", "short", "byte", "char", "type",
    "astype", "contiguous", "clone", "detach", "numpy", "tolist", "item", "pin_memory", "copy", "requires_grad_",
    "to_numpy", "to_list", "as_subclass", "share_memory_", "detach_", "to_dense", "cpu_", "squeeze_",
];
/// Methods that give the same values on other positions.
const RESHAPES: &[&str] = &[
    "view", "reshape", "squeeze", "unsqueeze", "flatten", "ravel", "permute", "transpose", "t", "view_as",
    "reshape_as", "expand", "expand_as", "repeat", "repeat_interleave", "unsqueeze_", "swapaxes", "movedim",
    "flip", "roll", "tile", "unflatten", "narrow", "chunk", "split",
];
/// Functions of torch or numpy that carry their first argument's values.
const CONVERSIONS: &[&str] = &[
    "tensor", "as_tensor", "from_numpy", "LongTensor", "IntTensor", "FloatTensor", "DoubleTensor", "Tensor",
    "array", "asarray", "ascontiguousarray", "asanyarray", "squeeze", "unsqueeze", "flatten", "reshape",
    "transpose", "permute", "clone", "atleast_1d", "atleast_2d", "ravel", "int64", "int32", "float32", "long",
];
/// Functions that join several arrays: the values are those of the elements of their first argument.
const JOINS: &[&str] = &["stack", "cat", "concat", "concatenate", "hstack", "vstack", "column_stack", "dstack", "row_stack"];

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
            Some(Object::Instance(cm, class, built)) => match self.project.method_of(cm, class, "forward").or_else(|| self.project.method_of(cm, class, "__call__")) {
                Some((fm, fs)) => self.returns(cur, call, fm, fs, true, built.map(|b| (cm, class, b))),
                None => self.end(cur, call.start(), "a call of an object not followed further"),
            },
            Some(Object::LibraryInstance(_, class, _)) => {
                let text = made::text_of(m.file.text(), &call.func);
                self.end(cur, call.start(), format!("the output of `{text}` (a `{class}`); not followed further"))
            }
            Some(Object::Module(_)) => self.end(cur, call.start(), "a call of a module; not followed further"),
            None => match &*call.func {
                Expr::Attribute(attr) if stored_callable(m, cur.scope, attr) => self.through_callee(cur, call),
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

    /// What a user function returns, its parameters bound to this call's arguments.
    pub fn returns(
        &self,
        cur: &Cursor<'a>,
        call: &'a ast::ExprCall,
        fm: &'a Module<'a>,
        fs: ScopeId,
        method: bool,
        instance: Option<(&'a Module<'a>, ClassId, Built<'a>)>,
    ) -> Outcome<'a> {
        let mut env = Vec::new();
        if let Some((cm, class, built)) = instance {
            self.bind_init(&mut env, cm, class, built);
            self.bind_self(&mut env, fm, fs, built);
        }
        let caller = Cursor { path: Vec::new(), ..cur.clone() };
        self.bind_call(&mut env, fm, fs, call, &caller, method);
        self.function_returns(cur, fm, fs, Rc::new(env))
    }

    /// The `return` values of a function, each a possible source; for an item of a
    /// generator function's call (`for x, y in batches(…)`), the values it yields.
    pub fn function_returns(&self, cur: &Cursor<'a>, fm: &'a Module<'a>, fs: ScopeId, env: Rc<Vec<Alias<'a>>>) -> Outcome<'a> {
        let function = Project::function_name(fm, fs);
        if let (Some(yields), Some(Sel::Iter)) = (fm.index.yields.get(&fs), cur.first()) {
            let rest = cur.rest();
            let candidates = yields
                .iter()
                .map(|value| {
                    let draft = self.draft(fm, value.start(), Role::Move, format!("yielded by `{function}`"));
                    (Some(draft), Cursor { m: fm, scope: fs, expr: *value, path: rest.clone(), env: env.clone() })
                })
                .collect();
            return self.fork(cur, cur.expr.start(), &format!("the yields of `{function}`"), candidates);
        }
        let Some(returns) = fm.sem.returns.get(&fs).filter(|r| !r.is_empty()) else {
            return self.end(cur, cur.expr.start(), format!("`{function}` returns nothing the analysis sees; not followed further"));
        };
        let candidates = returns
            .iter()
            .map(|ret| {
                let draft = self.draft(fm, ret.start(), Role::Move, format!("returned by `{function}`"));
                (Some(draft), Cursor { m: fm, scope: fs, expr: *ret, path: cur.path.clone(), env: env.clone() })
            })
            .collect();
        self.fork(cur, cur.expr.start(), &format!("the returns of `{function}`"), candidates)
    }

    /// Binds a function's parameters to a call's arguments.
    pub fn bind_call(&self, env: &mut Vec<Alias<'a>>, fm: &'a Module<'a>, fs: ScopeId, call: &'a ast::ExprCall, caller: &Cursor<'a>, method: bool) {
        let Some(def) = fm.sem.function(fs) else { return };
        let init = def.name.as_str() == "__init__";
        for (index, param) in def.parameters.iter_non_variadic_params().enumerate() {
            if method && index == 0 {
                continue;
            }
            let name = param.parameter.name.as_str();
            let position = param_position(call, index, method, init);
            let Some(arg) = argument(call, name, position) else { continue };
            let to = Cursor { expr: arg, path: Vec::new(), ..caller.clone() };
            env.push(Alias { m: fm, within: def.range, name, to, sel: Vec::new(), samples: false, param: true });
        }
    }

    fn lambda(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall, lm: &'a Module<'a>, ls: ScopeId, lambda: &'a ast::ExprLambda) -> Outcome<'a> {
        let caller = Cursor { path: Vec::new(), ..cur.clone() };
        let env = lambda_env(&Cursor { m: lm, ..cur.clone() }, lambda, call, &caller);
        self.follow(Cursor { m: lm, scope: ls, expr: &lambda.body, path: cur.path.clone(), env })
    }

    /// A method called on a value the analysis cannot name: by what the method does.
    fn method_call(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall, attr: &'a ast::ExprAttribute) -> Outcome<'a> {
        let m = cur.m;
        let method = attr.attr.as_str();
        let at = call.start();
        let receiver = cur.at(&attr.value);
        let text = made::text_of(m.file.text(), cur.expr);
        let args = &call.arguments.args;
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
                Some(Sel::Index(0)) => self.read(cur, at, receiver.with_path(with_first(&cur.path, 2, Sel::Iter))),
                Some(Sel::Index(1)) => self.read(cur, at, receiver.with_path(with_first(&cur.path, 2, Sel::Elem))),
                _ => self.end(cur, at, format!("`{text}`: not followed further")),
            },
            "values" => self.read(cur, at, receiver.with_path(with_first(&cur.path, 1, Sel::Elem))),
            "keys" => self.read(cur, at, receiver.with_path(with_first(&cur.path, 1, Sel::Iter))),
            "masked_fill" | "fill" | "index_fill" if !args.is_empty() => {
                let value = args.last().unwrap();
                let sides = vec![(None, receiver.clone()), (None, cur.at(value))];
                self.fork(cur, at, &format!("`{text}`"), sides)
            }
            "topk" | "sort" | "max" | "min" | "kthvalue" | "mode" if matches!(cur.first(), Some(Sel::Index(1))) => {
                self.made(cur, at, format!("indices chosen by `{text}`"), Values::Range(Some(0.0), None))
            }
            m if made::index_maker(m) => self.made(cur, at, format!("indices chosen by `{text}`"), Values::Range(Some(0.0), None)),
            // A random generator's draw (`rng.integers(0, 4, size=…)`, `random.randint(…)`).
            "integers" | "randint" => {
                let numbers = args.iter().take_while(|a| !matches!(a, Expr::Tuple(_) | Expr::List(_))).count().min(2);
                let values = made::bounded(&args[..numbers], method == "randint" && !is_numpy(cur, attr), &|e| self.constant(cur, e));
                self.made(cur, at, format!("drawn at random by `{text}`"), values)
            }
            m if made::creator(m).is_some() => {
                self.made(cur, at, format!("`{text}`: {}", made::creator(m).unwrap_or("")), Values::Unknown)
            }
            m if made::reduction(m) => {
                self.made(cur, at, format!("`{text}` computes it from the data"), Values::Unknown)
            }
            "clamp" | "clip" | "round" | "floor" | "ceil" | "abs" | "neg" | "add" | "sub" | "mul" | "div" | "remainder"
            | "fmod" | "pow" | "sqrt" | "exp" | "log" | "softmax" | "log_softmax" | "sigmoid" | "cumsum" | "diff" => {
                let why = made::non_finite(method).map_or(String::new(), |w| format!(": {w}"));
                self.made(cur, at, format!("`{text}` computes it{why}"), Values::Unknown)
            }
            "split" | "strip" | "rstrip" | "lstrip" | "read" | "readline" | "readlines" | "decode" | "lower" | "upper" => {
                self.end(cur, at, format!("text from `{text}`; not followed further"))
            }
            _ => self.end(cur, at, format!("`{text}` is a call the analysis does not follow")),
        }
    }

    fn read(&self, cur: &Cursor<'a>, at: TextSize, next: Cursor<'a>) -> Outcome<'a> {
        let text = made::text_of(cur.m.file.text(), next.expr);
        self.then(self.draft(cur.m, at, Role::Read, format!("read from `{text}`")), next)
    }

    /// `d.get(k, default)`: the default, or a value of the map.
    fn lookup(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall, attr: &'a ast::ExprAttribute, method: &str) -> Outcome<'a> {
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
            let note = format!("`{text}` gives `{value}` ({}) for a `{key}` missing from the map", made::show(v));
            self.made(cur, at, note, Values::exactly(v))
        } else if made::is_constant(default) {
            let value = made::text_of(m.file.text(), default);
            let note = format!("`{text}` gives {value} for a `{key}` missing from the map");
            self.made(cur, at, note, made::constant_values(default))
        } else {
            let note = format!("`{text}` falls back to `{}` for a `{key}` missing from the map", made::text_of(m.file.text(), default));
            self.then(self.draft(m, at, Role::Read, note), cur.at(default))
        };
        self.pick(cur, at, &format!("`{text}`"), vec![fallback, read])
    }

    /// A library API called: a conversion, a join, a creator, a counter, a parse, a loader.
    fn api_call(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall, root: &str, name: &str) -> Outcome<'a> {
        let m = cur.m;
        let at = call.start();
        let args = &call.arguments.args;
        let first = || args.first().filter(|a| !a.is_starred_expr());
        let text = made::text_of(m.file.text(), cur.expr);
        if let Some(found) = self.loader_call(cur, call, root, name) {
            return found;
        }
        match (root, name) {
            ("builtins", "int" | "float") => return self.parse_or_cast(cur, call, name),
            ("builtins", "len") => {
                return self.made(cur, at, format!("`{text}` computes a size from the data"), Values::Range(Some(0.0), None))
            }
            ("builtins", "list" | "tuple" | "sorted" | "reversed" | "set" | "frozenset") => {
                let Some(arg) = first() else { return Outcome::Dead };
                return self.then(self.draft(m, at, Role::Move, format!("made a {name}")), cur.at(arg).with_path(elems(&cur.path)));
            }
            ("builtins", "iter") => return first().map_or(Outcome::Dead, |a| self.follow(cur.at(a))),
            ("builtins", "next") => {
                let Some(arg) = first() else { return Outcome::Dead };
                return self.follow(cur.at(arg).with_path(cur.prefixed(&[Sel::Iter])));
            }
            ("builtins", "enumerate") => return self.enumerate(cur, call),
            ("builtins", "zip") => return self.zip(cur, call),
            ("builtins", "range") => return self.made(cur, at, format!("counted by `{text}`"), made::bounded(args, false, &|e| self.constant(cur, e))),
            ("builtins", "filter") => return args.get(1).map_or(Outcome::Dead, |a| self.follow(cur.at(a))),
            ("builtins", "map") => return self.mapped(cur, call),
            ("builtins", "max" | "min" | "sum" | "abs" | "round") => {
                return self.made(cur, at, format!("`{text}` computes it"), Values::Unknown)
            }
            ("builtins", "str" | "repr" | "format") => return Outcome::Dead,
            ("random", "randint") => return self.made(cur, at, format!("drawn by `{text}`"), made::bounded(args, true, &|e| self.constant(cur, e))),
            _ => {}
        }
        if let Some(how) = made::parser(root, name) {
            return self.made(cur, at, format!("`{text}` {how}"), Values::Unknown);
        }
        if matches!(root, "tqdm" | "rich" | "progressbar" | "alive_progress") || matches!(name, "tqdm" | "track") {
            return match name {
                "trange" => self.made(cur, at, format!("counted by `{text}`"), made::bounded(args, false, &|e| self.constant(cur, e))),
                _ => first().map_or(Outcome::Dead, |a| self.follow(cur.at(a))),
            };
        }
        if !matches!(root, "torch" | "numpy" | "builtins" | "random" | "math" | "scipy" | "pandas") {
            return self.end(cur, at, format!("`{text}` is a library call; not followed further"));
        }
        if CONVERSIONS.contains(&name) {
            let Some(arg) = first() else { return self.made(cur, at, format!("`{text}` makes it"), Values::Unknown) };
            let path = if matches!(name, "tensor" | "as_tensor" | "from_numpy" | "array" | "asarray" | "LongTensor" | "IntTensor" | "FloatTensor" | "Tensor") {
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
            return self.then(self.draft(m, at, Role::Move, format!("joined by `{}`", short_call(name))), next);
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
                    return self.made(cur, at, format!("`{text}` fills it with a constant"), made::constant_values(value));
                }
                let note = format!("filled by `{}`", short_call(name));
                return self.then(self.draft(m, at, Role::Move, note), cur.at(value).with_path(Vec::new()));
            }
            "zeros" | "zeros_like" => return self.made(cur, at, format!("`{text}` fills it with 0"), Values::exactly(0.0)),
            "ones" | "ones_like" => return self.made(cur, at, format!("`{text}` fills it with 1"), Values::exactly(1.0)),
            "randint" | "integers" => {
                let numbers = args.iter().take_while(|a| !matches!(a, Expr::Tuple(_) | Expr::List(_))).count().min(2);
                let values = made::bounded(&args[..numbers], false, &|e| self.constant(cur, e));
                let range = match values {
                    Values::Range(Some(lo), Some(hi)) => format!(": values {} to {}", made::show(lo), made::show(hi)),
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
            "one_hot" => return self.made(cur, at, format!("`{text}` makes one-hot rows"), Values::Range(Some(0.0), Some(1.0))),
            _ => {}
        }
        if let Some(what) = made::creator(name) {
            return self.made(cur, at, format!("`{text}`: {what}"), Values::Unknown);
        }
        if made::index_maker(name) {
            return self.made(cur, at, format!("indices chosen by `{text}`"), Values::Range(Some(0.0), None));
        }
        if let Some(why) = made::non_finite(name) {
            return self.made(cur, at, format!("`{text}` {why}"), Values::Unknown);
        }
        if made::reduction(name) {
            return self.made(cur, at, format!("`{text}` computes it from the data"), Values::Unknown);
        }
        self.end(cur, at, format!("`{text}` is a library call; not followed further"))
    }

    /// `map(f, xs)`: an element is what `f` returns for an element of `xs` (`f` a function,
    /// a lambda, or `functools.partial` of one with some parameters given).
    fn mapped(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall) -> Outcome<'a> {
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
            Expr::Call(partial) if matches!(self.project.resolve(cur.m, cur.scope, &partial.func), Some(Object::Api("functools", "partial"))) => {
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
                let mut free = def.parameters.iter_non_variadic_params().map(|p| p.parameter.name.as_str()).collect::<Vec<_>>();
                if let Some(partial) = given {
                    for (i, arg) in partial.arguments.args.iter().skip(1).enumerate() {
                        if let Some(name) = free.get(i).copied() {
                            env.push(Alias { m: fm, within: def.range, name, to: cur.at(arg).with_path(Vec::new()), sel: Vec::new(), samples: false, param: true });
                        }
                    }
                    free.drain(..partial.arguments.args.len().saturating_sub(1).min(free.len()));
                    for keyword in &partial.arguments.keywords {
                        let Some(name) = keyword.arg.as_ref().map(|a| a.as_str()) else { continue };
                        free.retain(|f| *f != name);
                        if let Some(param) = def.parameters.iter_non_variadic_params().find(|p| p.parameter.name.as_str() == name) {
                            let name = param.parameter.name.as_str();
                            env.push(Alias { m: fm, within: def.range, name, to: cur.at(&keyword.value).with_path(Vec::new()), sel: Vec::new(), samples: false, param: true });
                        }
                    }
                }
                if let Some(first) = free.first().copied() {
                    env.push(Alias { m: fm, within: def.range, name: first, to: element, sel: Vec::new(), samples: false, param: true });
                }
                let inner = Cursor { path: rest, ..cur.clone() };
                self.function_returns(&inner, fm, fs, Rc::new(env))
            }
            Some(Object::Lambda(lm, ls, lambda)) if given.is_none() => {
                let mut env = (*cur.env).clone();
                if let Some(first) = lambda.parameters.as_ref().and_then(|p| p.iter_non_variadic_params().next()) {
                    env.push(Alias { m: lm, within: lambda.range, name: first.parameter.name.as_str(), to: element, sel: Vec::new(), samples: false, param: false });
                }
                self.follow(Cursor { m: lm, scope: ls, expr: &lambda.body, path: rest, env: Rc::new(env) })
            }
            _ => return self.end(cur, at, format!("`{text}` maps a function not followed")),
        };
        outcome.prepend(Some(self.draft(cur.m, at, Role::Move, note)))
    }

    /// `int(x)` / `float(x)`: a parse of raw text makes the value; a cast of a number
    /// carries it.
    fn parse_or_cast(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall, name: &str) -> Outcome<'a> {
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

    /// Whether an expression provably holds text read from outside (a line of a file, a
    /// CSV field, a split string, `input()`).
    fn is_text(&self, m: &'a Module<'a>, scope: ScopeId, expr: &'a Expr, depth: u32) -> bool {
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
                Some(Object::Api("csv", "reader" | "DictReader")) | Some(Object::Api("io", "StringIO" | "open")) => true,
                _ => matches!(&*call.func, Expr::Attribute(a) if matches!(a.attr.as_str(),
                    "split" | "rsplit" | "strip" | "lstrip" | "rstrip" | "readline" | "readlines" | "read"
                    | "read_text" | "decode" | "group" | "groups" | "splitlines" | "lower" | "upper" | "replace" | "partition")),
            },
            Expr::Name(name) => {
                let Some((s, binding)) = m.sem.lookup(scope, name.id.as_str(), name.range.start()) else { return false };
                let mut bound = &binding.value;
                while let Bound::Element(inner, _) = bound {
                    bound = inner;
                }
                match bound {
                    Bound::Value(v) | Bound::Item(v) => self.is_text(m, s, v, depth + 1),
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

    fn enumerate(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall) -> Outcome<'a> {
        let at = call.start();
        let text = made::text_of(cur.m.file.text(), cur.expr);
        let Some(Sel::Iter) = cur.first() else { return self.end(cur, at, format!("`{text}`: not followed further")) };
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

    fn zip(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall) -> Outcome<'a> {
        let at = call.start();
        match (cur.first(), cur.path.get(1)) {
            (Some(Sel::Iter), Some(Sel::Index(i))) => {
                let Some(arg) = usize::try_from(*i).ok().and_then(|i| call.arguments.args.get(i)) else { return Outcome::Dead };
                let mut path = vec![Sel::Iter];
                path.extend(cur.path.iter().skip(2).cloned());
                self.follow(cur.at(arg).with_path(path))
            }
            _ => self.end(cur, at, "a whole item of `zip(…)`; not followed further"),
        }
    }

    /// `pad_sequence(seqs, padding_value=-1)`: the padding constant, or the sequences' values.
    fn padded(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall, name: &str) -> Outcome<'a> {
        let m = cur.m;
        let at = call.start();
        let text = made::text_of(m.file.text(), cur.expr);
        let (padding, default) = match name {
            "pad_sequence" => (argument(call, "padding_value", Some(2)), 0.0),
            _ => (argument(call, "value", Some(3)), 0.0),
        };
        let value = padding.and_then(made::number).unwrap_or(default);
        let pad = self.made(cur, at, format!("`{text}` pads with {}", made::show(value)), Values::exactly(value));
        let Some(seqs) = call.arguments.args.first() else { return pad };
        let path = if name == "pad_sequence" { cur.prefixed(&[Sel::Elem]) } else { cur.path.clone() };
        let inner = self.then(self.draft(m, at, Role::Move, format!("padded by `{name}`")), cur.at(seqs).with_path(elems(&path)));
        self.pick(cur, at, &format!("`{text}`"), vec![pad, inner])
    }
}

/// Whether a receiver is numpy's (whose `randint` excludes its upper bound, unlike `random`'s).
fn is_numpy(cur: &Cursor<'_>, attr: &ast::ExprAttribute) -> bool {
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
pub fn param_position(call: &ast::ExprCall, index: usize, method: bool, _init: bool) -> Option<usize> {
    let _ = call;
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
fn elems(path: &[Sel]) -> Vec<Sel> {
    path.to_vec()
}

/// `path` with its first `n` selectors replaced by `sel`.
fn with_first(path: &[Sel], n: usize, sel: Sel) -> Vec<Sel> {
    let mut out = vec![sel];
    out.extend(path.iter().skip(n).cloned());
    out
}

fn short_call(name: &str) -> String {
    format!("{name}(…)")
}

/// A lambda's parameters bound to a call's arguments, around its body.
pub fn lambda_env<'a>(cur: &Cursor<'a>, lambda: &'a ast::ExprLambda, call: &'a ast::ExprCall, caller: &Cursor<'a>) -> Rc<Vec<Alias<'a>>> {
    let mut env = (*cur.env).clone();
    if let Some(params) = &lambda.parameters {
        for (index, param) in params.iter_non_variadic_params().enumerate() {
            let name = param.parameter.name.as_str();
            let Some(arg) = argument(call, name, Some(index)) else { continue };
            let to = Cursor { expr: arg, path: Vec::new(), ..caller.clone() };
            env.push(Alias { m: cur.m, within: lambda.range, name, to, sel: Vec::new(), samples: false, param: false });
        }
    }
    Rc::new(env)
}
