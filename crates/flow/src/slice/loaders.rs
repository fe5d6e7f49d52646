//! Data loading: a `DataLoader`'s batch is its collate function's return (or, with the
//! default collate, the stack of its dataset's samples); a dataset's sample is what its
//! class's `__getitem__` returns, a row of each tensor of a `TensorDataset`, or a sample of
//! the dataset a `Subset`, `random_split` or `ConcatDataset` wraps.

use super::follow::{Alias, Cursor, Outcome, Sel, Walker};
use super::made;
use super::project::Module;
use super::query::Role;
use super::resolve::{Built, Object};
use crate::semantic::{argument, ClassId};
use ruff_python_ast as ast;
use ruff_text_size::Ranged;
use std::rc::Rc;

impl<'p, 'a> Walker<'p, 'a> {
    /// A DataLoader or a dataset wrapper of torch, when the path asks for a batch or a sample.
    pub fn loader_call(
        &self,
        cur: &Cursor<'a>,
        call: &'a ast::ExprCall,
        root: &str,
        name: &str,
    ) -> Option<Outcome<'a>> {
        if root != "torch" {
            return None;
        }
        let m = cur.m;
        let at = call.start();
        let args = &call.arguments.args;
        Some(match (name, cur.first()) {
            ("DataLoader", Some(Sel::Iter)) if self.query.rows => self.loader_rows(cur, call),
            ("DataLoader", Some(Sel::Iter)) => self.batch(cur, call),
            ("DataLoader", _) => self.end(cur, at, "the DataLoader itself; not followed further"),
            ("TensorDataset", Some(Sel::Sample)) => match cur.path.get(1) {
                Some(Sel::Index(i)) => {
                    let Some(tensor) = usize::try_from(*i).ok().and_then(|i| args.get(i)) else {
                        return Some(Outcome::Dead);
                    };
                    let mut path = vec![Sel::Elem];
                    path.extend(cur.path.iter().skip(2).cloned());
                    let note = format!(
                        "a row of the TensorDataset's tensor `{}`",
                        made::text_of(m.file.text(), tensor)
                    );
                    self.then(self.draft(m, at, Role::Unpack, note), cur.at(tensor).with_path(path))
                }
                _ => self.end(cur, at, "a whole sample of a TensorDataset; not followed further"),
            },
            ("Subset", Some(Sel::Sample)) => {
                let dataset = argument(call, "dataset", Some(0))?;
                self.then(self.draft(m, at, Role::Move, "a sample of the Subset's dataset"), cur.at(dataset))
            }
            ("random_split", Some(Sel::Index(_) | Sel::Iter | Sel::Elem))
                if cur.path.get(1) == Some(&Sel::Sample) =>
            {
                let dataset = argument(call, "dataset", Some(0))?;
                let note = "a sample of the dataset `random_split` divides";
                self.then(self.draft(m, at, Role::Move, note), cur.at(dataset).with_path(cur.rest()))
            }
            ("ConcatDataset", Some(Sel::Sample)) => {
                let datasets = argument(call, "datasets", Some(0))?;
                let note = "a sample of one of the concatenated datasets";
                self.then(
                    self.draft(m, at, Role::Move, note),
                    cur.at(datasets).with_path(cur.prefixed(&[Sel::Elem])),
                )
            }
            _ => return None,
        })
    }

    /// One batch of `DataLoader(dataset, …)`.
    fn batch(&self, cur: &Cursor<'a>, call: &'a ast::ExprCall) -> Outcome<'a> {
        let m = cur.m;
        let at = call.start();
        let rest = cur.rest();
        let Some(dataset) = argument(call, "dataset", Some(0)) else {
            return self.end(cur, at, "a DataLoader without a dataset argument; not followed further");
        };
        let samples = cur.at(dataset).with_path(Vec::new());
        let collate =
            call.arguments.find_keyword("collate_fn").map(|k| &k.value).filter(|v| !v.is_none_literal_expr());
        let Some(collate) = collate else {
            let mut path = vec![Sel::Sample];
            path.extend(rest);
            let note = format!(
                "each batch stacks samples of `{}` (the default collate)",
                made::text_of(m.file.text(), dataset)
            );
            return self.then(self.draft(m, at, Role::Move, note), samples.with_path(path));
        };
        let text = made::text_of(m.file.text(), collate);
        let (fm, fs, within, param) = match self.project.resolve(m, cur.scope, collate) {
            Some(Object::Function(fm, fs)) => {
                let Some(def) = fm.sem.function(fs) else { return Outcome::Dead };
                let param =
                    def.parameters.iter_non_variadic_params().next().map(|p| p.parameter.name.as_str());
                (fm, fs, def.range, param)
            }
            Some(Object::Lambda(lm, ls, lambda)) => {
                let param = lambda
                    .parameters
                    .as_ref()
                    .and_then(|p| p.iter_non_variadic_params().next())
                    .map(|p| p.parameter.name.as_str());
                let mut env = (*cur.env).clone();
                if let Some(name) = param {
                    env.push(Alias {
                        m: lm,
                        within: lambda.range,
                        name,
                        to: samples,
                        sel: Vec::new(),
                        samples: true,
                        param: false,
                    });
                }
                let note = format!("each batch is made by the collate function `{text}`");
                let next = Cursor { m: lm, scope: ls, expr: &lambda.body, path: rest, env: Rc::new(env) };
                return self.then(self.draft(m, at, Role::Move, note), next);
            }
            _ => {
                return self.end(
                    cur,
                    at,
                    format!("batches made by `{text}`, a collate function not followed"),
                )
            }
        };
        let mut env = Vec::new();
        if let Some(name) = param {
            env.push(Alias { m: fm, within, name, to: samples, sel: Vec::new(), samples: true, param: true });
        }
        let note = format!("each batch is made by the collate function `{text}`");
        let inner = Cursor { path: rest, ..cur.clone() };
        self.function_returns(&inner, fm, fs, Rc::new(env)).prepend(Some(self.draft(m, at, Role::Move, note)))
    }

    /// A sample of an instance of a user dataset class: what its `__getitem__` returns,
    /// `__init__`'s parameters bound to the call that built it.
    pub fn sample_of_class(
        &self,
        cur: &Cursor<'a>,
        cm: &'a Module<'a>,
        class: ClassId,
        built: Option<Built<'a>>,
        path: Vec<Sel>,
        from_runtime: bool,
    ) -> Outcome<'a> {
        let at = built.map_or(cur.expr.start(), |b| b.call.start());
        let class_name = cm.sem.classes[class].def.name.to_string();
        let seen = &self.query.observed.datasets;
        let runtime_names = !seen.is_empty() && seen.iter().any(|(c, _, _)| *c == class_name);
        if !seen.is_empty() && !runtime_names && seen.iter().any(|(_, f, _)| f.is_some()) {
            return Outcome::Dead;
        }
        let Some((gm, getitem)) = self.project.method_of(cm, class, "__getitem__") else {
            return self.end(
                cur,
                at,
                format!("`{class_name}` has no `__getitem__` the analysis sees; not followed further"),
            );
        };
        let mut env = Vec::new();
        if let Some(b) = built {
            self.bind_init(&mut env, cm, class, b);
            self.bind_self(&mut env, gm, getitem, b);
        }
        let rest: Vec<Sel> = path.into_iter().skip(1).collect();
        let inner = Cursor { m: gm, scope: getitem, expr: cur.expr, path: rest, env: Rc::new(env) };
        let outcome = self.function_returns(&inner, gm, getitem, inner.env.clone());
        if from_runtime || runtime_names {
            return confirm_first(outcome);
        }
        outcome
    }

    /// `__getitem__`'s callers' view: `dataset[i]` of a user dataset, `xs[i]` of a list.
    pub fn sample_subscript(&self, cur: &Cursor<'a>, sub: &'a ast::ExprSubscript) -> Option<Outcome<'a>> {
        let Some(Object::Instance(cm, class, built)) = self.project.resolve(cur.m, cur.scope, &sub.value)
        else {
            return None;
        };
        self.project.method_of(cm, class, "__getitem__")?;
        let mut path = vec![Sel::Sample];
        path.extend(cur.path.iter().cloned());
        Some(self.sample_of_class(cur, cm, class, built, path, false))
    }
}

/// Marks the first step (a `__getitem__`'s return) as confirmed by the runtime chain.
fn confirm_first(outcome: Outcome<'_>) -> Outcome<'_> {
    match outcome {
        Outcome::Made(mut steps, v) => {
            if let Some(first) = steps.first_mut() {
                first.confirmed = true;
            }
            Outcome::Made(steps, v)
        }
        Outcome::End(mut steps, end) => {
            if let Some(first) = steps.first_mut() {
                first.confirmed = true;
            }
            Outcome::End(steps, end)
        }
        Outcome::Dead => Outcome::Dead,
    }
}
