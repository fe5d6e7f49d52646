//! Library calls, by what they do to a value: conversions and joins carry it; creators,
//! counters, random draws, parses of raw text (`text`), sizes and functions that can give
//! inf or NaN make it; `enumerate`, `zip`, `map`, `iter`/`next`, progress bars and padding
//! pass one part of it on (`iteration`).

use super::calls::{elems, reshaped, short_call};
use super::follow::{Cursor, Outcome, Sel, Walker};
use super::made::{self, Values};
use super::query::Role;
use crate::semantic::argument;
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

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
        self.array_call(cur, call, name, &text)
    }

    /// A call of torch, numpy, Python's math or random, scipy or pandas: conversions and
    /// joins carry the value; fills, draws, counters, creators and reductions make it.
    fn array_call(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall, name: &str, text: &str) -> Outcome<'a> {
        let m = cur.m;
        let at = call.start();
        let args = &call.arguments.args;
        let first = || args.first().filter(|a| !a.is_starred_expr());
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
        if let Some(found) = self.filled_or_drawn(cur, call, name, text) {
            return found;
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

    /// Padding, `where`, fills, random draws, counters and one-hot rows, by the op's name.
    fn filled_or_drawn(
        &self,
        cur: &Cursor<'a>,
        call: &'a ast::ExprCall,
        name: &str,
        text: &str,
    ) -> Option<Outcome<'a>> {
        let m = cur.m;
        let at = call.start();
        let args = &call.arguments.args;
        let found = match name {
            "pad_sequence" | "pad" => self.padded(cur, call, name),
            "where" if args.len() == 3 => {
                let sides = vec![(None, cur.at(&args[1])), (None, cur.at(&args[2]))];
                self.fork(cur, at, &format!("`{text}`"), sides)
            }
            "full" | "full_like" => {
                let Some(value) = argument(call, "fill_value", Some(1)) else { return Some(Outcome::Dead) };
                if made::is_constant(value) {
                    return Some(self.made(
                        cur,
                        at,
                        format!("`{text}` fills it with a constant"),
                        made::constant_values(value),
                    ));
                }
                let note = format!("filled by `{}`", short_call(name));
                self.then(self.draft(m, at, Role::Move, note), cur.at(value).with_path(Vec::new()))
            }
            "zeros" | "zeros_like" => {
                self.made(cur, at, format!("`{text}` fills it with 0"), Values::exactly(0.0))
            }
            "ones" | "ones_like" => {
                self.made(cur, at, format!("`{text}` fills it with 1"), Values::exactly(1.0))
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
                self.made(cur, at, format!("drawn at random by `{text}`{range}"), values)
            }
            "arange" => {
                let values = made::bounded(args, false, &|e| self.constant(cur, e));
                let from = match values {
                    Values::Range(Some(lo), _) if lo != 0.0 => format!(": it counts from {}", made::show(lo)),
                    _ => String::new(),
                };
                self.made(cur, at, format!("counted by `{text}`{from}"), values)
            }
            "one_hot" => self.made(
                cur,
                at,
                format!("`{text}` makes one-hot rows"),
                Values::Range(Some(0.0), Some(1.0)),
            ),
            _ => return None,
        };
        Some(found)
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
}
