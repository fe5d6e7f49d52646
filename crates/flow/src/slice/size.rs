//! Size, shape and dtype trails. A size trail starts at the module built with the size the
//! data broke (`nn.Linear(64, n_out)`, from the runtime's construction stack or found by
//! flow from the op's call) and follows its size argument back like a value. Shape and
//! dtype trails follow a value back to the call that gave it the shape or dtype the op
//! refused (`.view(-1, 1)`, `one_hot`, `dtype=torch.float32`), found with lint's facts.

use super::follow::{Cursor, Outcome, Walker};
use super::heads::{head, Head};
use super::made::{self, Values};
use super::names::line_offset;
use super::ops::size_argument;
use super::project::{Module, Project};
use super::query::{Chain, Frame, Query, Role, SizeQuery};
use super::resolve::Object;
use super::trail::to_trail;
use super::trail::Trail;
use crate::semantic::{argument, ScopeId};
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

/// The size trail of a module from its construction stack.
pub fn size_trail(project: &Project<'_>, query: &SizeQuery) -> Trail {
    let Some(site) = query.sites.first() else { return Trail::default() };
    let Some(m) = project.module(&site.file) else { return Trail::default() };
    let value_query = Query { frames: query.sites.clone(), ..Query::default() };
    let walker = Walker::new(project, &value_query, Chain::Size);
    let offset = line_offset(m, site.line);
    let Some(stmt) = m.index.statement_at(offset) else { return Trail::default() };
    let scope = m.index.scope_at(offset);
    let built = built_on_line(&walker, m, scope, stmt, site.line, query);
    let Some(built) = built else {
        let end = built_in_library(&walker, m, scope, stmt, site.line, query).unwrap_or_else(|| {
            walker.end(
                &cursor(m, scope, stmt_expr(stmt)),
                offset,
                format!("no `{}(…)` call on this line; not followed further", query.class),
            )
        });
        let mut trail = to_trail(end, &Frame { line: 0, ..site.clone() });
        for step in &mut trail.steps {
            step.confirmed |= step.role == Role::Sized;
        }
        return trail;
    };
    let outcome = sized(
        &walker,
        m,
        scope,
        built,
        &query.class,
        query.argument.as_deref(),
        query.note.clone(),
        query.size,
        query.need,
    );
    let mut trail = to_trail(outcome, &Frame { line: 0, ..site.clone() });
    for step in &mut trail.steps {
        step.confirmed |= step.role == Role::Sized;
    }
    trail
}

/// The runtime saw the module built during a library call on the user's line (a
/// pretrained model's `from_pretrained(…)`, `BertForSequenceClassification(config)`):
/// that call is where the user's code chose the size, though the library set it (a
/// default, a config it read); the trail ends inside the library.
fn built_in_library<'a>(
    walker: &Walker<'_, 'a>,
    m: &'a Module<'a>,
    scope: ScopeId,
    stmt: &'a ast::Stmt,
    line: usize,
    query: &SizeQuery,
) -> Option<Outcome<'a>> {
    // The one call of the statement, a library's: of two calls (`Trainer(…).train()`) the
    // stack does not say which built it.
    let calls = super::calls::calls_in(stmt);
    let [call] = calls[..] else { return None };
    let library = matches!(walker.project.resolve(m, scope, &call.func), Some(Object::Api(root, _) | Object::LibraryInstance(root, _, _)) if root != "builtins")
        || m.sem.api(&call.func).is_some_and(|(root, _)| root != "builtins");
    let first = m.file.line_of(call.start());
    if !library || line < first || line > m.file.line_of(call.end()) {
        return None;
    }
    let text = made::text_of(m.file.text(), &Expr::Call(call.clone()));
    let what = query.argument.as_deref().or(size_argument(&query.class).map(|k| k.0)).unwrap_or("size");
    let sizes = sizes_clause(what, query.size, query.need);
    let note = format!("`{text}` built the `{}` inside the library{sizes}", query.class);
    let draft = walker.draft(m, call.start(), Role::Sized, note);
    if let Some((field, value)) =
        query.size.and_then(|size| walker.config_field(m, scope, call, &query.class, size))
    {
        return Some(walker.follow(value).prepend(Some(field)).prepend(Some(draft)));
    }
    let end = walker.draft(
        m,
        call.start(),
        Role::Move,
        format!("its {what} is set inside the library (a default, or a configuration it read); not followed further"),
    );
    Some(Outcome::End(vec![draft], end))
}

/// `: out_features = 5, the data needs 6`, the sizes a construction step states (empty
/// when the runtime saw none).
fn sizes_clause(what: &str, size: Option<i64>, need: Option<i64>) -> String {
    match (size, need) {
        (Some(s), Some(n)) => format!(": {what} = {s}, the data needs {n}"),
        (Some(s), None) => format!(": {what} = {s}"),
        _ => String::new(),
    }
}

/// The step at the module's construction, then its size argument followed back.
#[allow(clippy::too_many_arguments)]
fn sized<'a>(
    walker: &Walker<'_, 'a>,
    m: &'a Module<'a>,
    scope: ScopeId,
    built: &'a ast::ExprCall,
    class: &str,
    argument_name: Option<&str>,
    note: Option<String>,
    size: Option<i64>,
    need: Option<i64>,
) -> Outcome<'a> {
    let text = made::text_of(m.file.text(), &Expr::Call(built.clone()));
    let known = size_argument(class);
    let name = argument_name.or(known.map(|k| k.0));
    let position = known.filter(|k| Some(k.0) == name).map(|k| k.1);
    let arg = name.and_then(|n| argument(built, n, position));
    let what = name.unwrap_or("size");
    let sizes = sizes_clause(what, size, need);
    let note = note.unwrap_or_else(|| format!("`{text}` built here{sizes}"));
    let draft = walker.draft(m, built.start(), Role::Sized, note);
    let Some(arg) = arg else {
        // Not given: the class's default (a loss's ignore_index, CTCLoss's blank 0).
        return Outcome::Made(vec![draft], Values::Unknown);
    };
    if made::number(arg).is_some() {
        return Outcome::Made(vec![draft], Values::Unknown);
    }
    walker.then(draft, cursor(m, scope, arg))
}

/// The construction of `query.class` on the site's line: of several calls of the class in
/// the statement, those that start on the line, then those whose size is not provably
/// another than the runtime saw.
fn built_on_line<'a>(
    walker: &Walker<'_, 'a>,
    m: &'a Module<'a>,
    scope: ScopeId,
    stmt: &'a ast::Stmt,
    line: usize,
    query: &SizeQuery,
) -> Option<&'a ast::ExprCall> {
    let class = query.class.as_str();
    let calls: Vec<&'a ast::ExprCall> = super::calls::calls_in(stmt)
        .into_iter()
        .filter(|call| {
            matches!(walker.project.resolve(m, scope, &call.func), Some(Object::LibraryInstance(_, c, _) | Object::Api(_, c)) if c == class)
                || callee_name(call) == Some(class)
        })
        .collect();
    let on_line: Vec<&'a ast::ExprCall> =
        calls.iter().copied().filter(|c| m.file.line_of(c.start()) == line).collect();
    let mut candidates = if on_line.is_empty() { calls } else { on_line };
    if candidates.len() > 1 {
        if let (Some(size), Some((name, position))) = (query.size, size_argument(class)) {
            let probe = cursor(m, scope, stmt_expr(stmt));
            candidates.retain(|c| {
                let arg = argument(c, query.argument.as_deref().unwrap_or(name), Some(position));
                arg.and_then(|a| walker.constant(&probe, a)).is_none_or(|v| v == size as f64)
            });
        }
    }
    match candidates.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

fn cursor<'a>(m: &'a Module<'a>, scope: ScopeId, expr: &'a Expr) -> Cursor<'a> {
    Cursor { m, scope, expr, path: Vec::new(), env: Default::default() }
}

fn callee_name(call: &ast::ExprCall) -> Option<&str> {
    match &*call.func {
        Expr::Name(n) => Some(n.id.as_str()),
        Expr::Attribute(a) => Some(a.attr.as_str()),
        _ => None,
    }
}

fn stmt_expr(stmt: &ast::Stmt) -> &Expr {
    match stmt {
        ast::Stmt::Expr(e) => &e.value,
        ast::Stmt::Assign(a) => &a.value,
        ast::Stmt::Return(r) => r.value.as_deref().unwrap_or_else(|| none()),
        _ => none(),
    }
}

fn none() -> &'static Expr {
    static NONE: std::sync::OnceLock<Expr> = std::sync::OnceLock::new();
    NONE.get_or_init(|| {
        Expr::NoneLiteral(ast::ExprNoneLiteral { node_index: Default::default(), range: Default::default() })
    })
}

/// The size trail found by flow from the op's call on the innermost frame's line: the
/// layer that makes a loss's input (its model's last layer), the embedding table called,
/// `one_hot`'s `num_classes`, the indexed tensor's construction.
pub fn size_by_flow(project: &Project<'_>, query: &Query, modules: bool) -> Trail {
    let Some(frame) = query.frames.first() else { return Trail::default() };
    let Some(m) = project.module(&frame.file) else { return Trail::default() };
    let walker = Walker::new(project, query, Chain::Size);
    let offset = line_offset(m, frame.line);
    let Some(stmt) = m.index.statement_at(offset) else { return Trail::default() };
    let scope = m.index.scope_at(offset);
    // Of two tables called on the line (`tok(ids) + pos(positions)`), none is claimed.
    let calls = super::names::marked(super::calls::calls_in(stmt), super::names::frame_range(m, frame));
    let mut found: Vec<Outcome<'_>> =
        calls.into_iter().filter_map(|call| call_size(&walker, m, scope, call, modules)).collect();
    if found.len() != 1 {
        return Trail::default();
    }
    let mut trail = to_trail(found.pop().unwrap(), &Frame { line: 0, ..frame.clone() });
    trail.steps.retain(|s| !(s.line == frame.line && s.role != Role::Made && s.role != Role::Sized));
    trail
}

fn call_size<'a>(
    walker: &Walker<'_, 'a>,
    m: &'a Module<'a>,
    scope: ScopeId,
    call: &'a ast::ExprCall,
    modules: bool,
) -> Option<Outcome<'a>> {
    let object = walker.project.resolve(m, scope, &call.func);
    // A padding or void label that the loss does not ignore: the loss's construction is a
    // step even where the guard named the modules whose size broke (it judges sizes, not
    // a loss's ignore_index).
    if let Some(Object::LibraryInstance("torch", "CrossEntropyLoss" | "NLLLoss", built)) = object {
        if let Some(value) = padding(walker) {
            return ignored(walker, built, value);
        }
    }
    let module_size = matches!(
        object,
        Some(Object::LibraryInstance(..)) | Some(Object::Api(_, "cross_entropy" | "nll_loss" | "ctc_loss"))
    );
    if module_size && !modules {
        return None;
    }
    match object {
        Some(Object::Api("torch", "one_hot")) => {
            let size = argument(call, "num_classes", Some(1))?;
            Some(walker.follow(cursor(m, scope, size)))
        }
        // A padding or void label (-1, 255) breaks the loss's ignore_index, not the head.
        Some(Object::Api("torch", "cross_entropy" | "nll_loss")) => {
            if padding(walker).is_some() {
                return None;
            }
            head_size(walker, m, scope, argument(call, "input", Some(0))?)
        }
        Some(Object::Api("torch", "ctc_loss")) | Some(Object::LibraryInstance("torch", "CTCLoss", _)) => {
            head_size(walker, m, scope, argument(call, "log_probs", Some(0))?)
        }
        Some(Object::LibraryInstance("torch", "CrossEntropyLoss" | "NLLLoss", built)) => {
            match padding(walker) {
                Some(value) => ignored(walker, built, value),
                None => head_size(walker, m, scope, argument(call, "input", Some(0))?),
            }
        }
        Some(Object::LibraryInstance("torch", class @ ("Embedding" | "EmbeddingBag"), built)) => {
            // Of two tables on the line, not one provably of another size than the bound.
            if let (Some(bound), Some(size)) =
                (walker.query.bad.bound, argument(built.call, "num_embeddings", Some(0)))
            {
                let probe = cursor(built.m, built.scope, size);
                if walker.constant(&probe, size).is_some_and(|s| s != bound) {
                    return None;
                }
            }
            Some(sized(walker, built.m, built.scope, built.call, class, None, None, None, None))
        }
        Some(Object::Api("torch", name)) if is_index_op(name) => {
            let input = argument(call, "input", Some(0))?;
            let dim = argument(call, "dim", Some(1)).and_then(made::number);
            created_size(walker, m, scope, input, dim).or_else(|| scores_size(walker, m, scope, input, dim))
        }
        None if matches!(&*call.func, Expr::Name(_)) => passed_loss_size(walker, m, scope, call, modules),
        None => {
            let Expr::Attribute(attr) = &*call.func else { return None };
            if !is_index_op(attr.attr.as_str()) {
                return None;
            }
            let dim = argument(call, "dim", Some(0)).and_then(made::number);
            created_size(walker, m, scope, &attr.value, dim)
                .or_else(|| scores_size(walker, m, scope, &attr.value, dim))
        }
        _ => None,
    }
}

/// A class-target loss passed in as a parameter (`criterion(out, y)`), of the class every
/// caller passes: the layer that makes its input's scores.
fn passed_loss_size<'a>(
    walker: &Walker<'_, 'a>,
    m: &'a Module<'a>,
    scope: ScopeId,
    call: &'a ast::ExprCall,
    modules: bool,
) -> Option<Outcome<'a>> {
    let Expr::Name(name) = &*call.func else { return None };
    let class = super::start::parameter_class(walker, m, scope, name)?;
    if !modules || !matches!(class, "CrossEntropyLoss" | "NLLLoss") || padding(walker).is_some() {
        return None;
    }
    head_size(walker, m, scope, argument(call, "input", Some(0))?)
}

fn is_index_op(name: &str) -> bool {
    matches!(
        name,
        "index_add"
            | "index_add_"
            | "index_copy"
            | "index_copy_"
            | "index_fill"
            | "index_fill_"
            | "index_select"
            | "gather"
            | "scatter"
            | "scatter_"
            | "scatter_add"
            | "scatter_add_"
            | "index_put"
            | "index_put_"
            | "take"
    )
}

/// The size of an indexed tensor along `dim`, where a creator (`torch.zeros(n, …)`) made it.
fn created_size<'a>(
    walker: &Walker<'_, 'a>,
    m: &'a Module<'a>,
    scope: ScopeId,
    tensor: &'a Expr,
    dim: Option<f64>,
) -> Option<Outcome<'a>> {
    let Expr::Name(name) = tensor else { return None };
    let (s, binding) = m.sem.lookup(scope, name.id.as_str(), name.range.start())?;
    let crate::semantic::Bound::Value(Expr::Call(creator)) = &binding.value else { return None };
    let Some(Object::Api("torch" | "numpy", kind @ ("zeros" | "ones" | "empty" | "full" | "randn" | "rand"))) =
        walker.project.resolve(m, s, &creator.func)
    else {
        return None;
    };
    let dim = dim.unwrap_or(0.0) as usize;
    let sizes: Vec<&'a Expr> = match creator.arguments.args.first()? {
        Expr::Tuple(t) => t.elts.iter().collect(),
        Expr::List(l) => l.elts.iter().collect(),
        _ => creator.arguments.args.iter().take_while(|_| kind != "full").collect(),
    };
    let size = *sizes.get(dim)?;
    let text = made::text_of(m.file.text(), &Expr::Call(creator.clone()));
    let note = format!(
        "`{text}` made the indexed tensor: {} rows along dimension {dim}",
        made::text_of(m.file.text(), size)
    );
    let draft = walker.draft(m, creator.start(), Role::Sized, note);
    if made::number(size).is_some() {
        return Some(Outcome::Made(vec![draft], Values::Unknown));
    }
    Some(walker.then(draft, cursor(m, s, size)))
}

/// An index along the class dimension of a model's scores (`logp.gather(1, target)` in a
/// loss written by hand): the layer that makes the scores, when its size is not provably
/// another than the one the index broke. (The guard judges no module for an index op, so
/// this is found by flow with or without its facts.)
fn scores_size<'a>(
    walker: &Walker<'_, 'a>,
    m: &'a Module<'a>,
    scope: ScopeId,
    scores: &'a Expr,
    dim: Option<f64>,
) -> Option<Outcome<'a>> {
    if !matches!(dim, Some(d) if d == 1.0 || d == -1.0) {
        return None;
    }
    let found = head(walker, m, scope, scores, 0, None)?;
    let size = found.size_expr().and_then(|a| walker.constant(&cursor(found.m, found.scope, a), a));
    if let (Some(size), Some(bound)) = (size, walker.query.bad.bound) {
        if size != bound {
            return None;
        }
    }
    head_size(walker, m, scope, scores)
}

/// The size trail of the layer that makes a loss's input: its model's last layer, built
/// with the number of classes.
fn head_size<'a>(
    walker: &Walker<'_, 'a>,
    m: &'a Module<'a>,
    scope: ScopeId,
    input: &'a Expr,
) -> Option<Outcome<'a>> {
    let found = head(walker, m, scope, input, 0, None)?;
    let size = found
        .size_expr()
        .and_then(|a| walker.constant(&cursor(found.m, found.scope, a), a))
        .map(|v| v as i64);
    let need = walker
        .query
        .bad
        .values
        .iter()
        .copied()
        .filter(|v| *v >= 0.0)
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
        .map(|v| v as i64 + 1)
        .filter(|n| size.is_none_or(|s| *n > s));
    if found.class == "Parameter" {
        return Some(weight_sized(walker, &found, size, need));
    }
    Some(sized(walker, found.m, found.scope, found.ctor, found.class, None, None, size, need))
}

/// A weight built by hand (`nn.Parameter(torch.Tensor(n_in, n_out))`) whose last dimension
/// is the number of scores: its creation as the step, then that size followed back, the
/// owner's `__init__` parameters bound to the call that built the layer.
fn weight_sized<'a>(
    walker: &Walker<'_, 'a>,
    found: &Head<'a>,
    size: Option<i64>,
    need: Option<i64>,
) -> Outcome<'a> {
    let text = made::text_of(found.m.file.text(), &Expr::Call(found.ctor.clone()));
    let Some(arg) = found.size_expr() else {
        return Outcome::Made(
            vec![walker.draft(found.m, found.ctor.start(), Role::Sized, format!("`{text}` built here"))],
            Values::Unknown,
        );
    };
    let what = made::text_of(found.m.file.text(), arg);
    let sizes = match (size, need) {
        (Some(s), Some(n)) => format!(" ({s}; the data needs {n})"),
        (Some(s), None) => format!(" ({s})"),
        _ => String::new(),
    };
    let note =
        format!("`{text}` makes the weight whose last dimension, `{what}`{sizes}, is the number of scores");
    let draft = walker.draft(found.m, found.ctor.start(), Role::Sized, note);
    if made::number(arg).is_some() {
        return Outcome::Made(vec![draft], Values::Unknown);
    }
    let mut env = Vec::new();
    if let Some((cm, class, built)) = found.owner {
        walker.bind_init(&mut env, cm, class, built);
    }
    let next =
        Cursor { m: found.m, scope: found.scope, expr: arg, path: Vec::new(), env: std::rc::Rc::new(env) };
    walker.then(draft, next)
}

/// The one bad value, when it looks like padding or a void label (negative, 255).
fn padding(walker: &Walker<'_, '_>) -> Option<f64> {
    void_label(&walker.query.bad.values)
}

/// The one value of `values`, when it looks like padding or a void label (negative, 255).
pub fn void_label(values: &[f64]) -> Option<f64> {
    match values {
        [v] if *v < 0.0 || *v == 255.0 => Some(*v),
        _ => None,
    }
}

/// A class-target loss built without an `ignore_index` equal to the one bad value, when
/// that value looks like padding or void (negative, 255): its construction as a step.
fn ignored<'a>(walker: &Walker<'_, 'a>, built: super::resolve::Built<'a>, value: f64) -> Option<Outcome<'a>> {
    let value = &value;
    let ignore = argument(built.call, "ignore_index", None);
    if ignore.and_then(made::number) == Some(*value) {
        return None;
    }
    let text = made::text_of(built.m.file.text(), &Expr::Call(built.call.clone()));
    let set = ignore.map_or("-100 (the default)".to_string(), |i| made::text_of(built.m.file.text(), i));
    let note = format!(
        "`{text}` built here: it skips targets equal to ignore_index = {set}, not {}",
        made::show(*value)
    );
    Some(Outcome::Made(vec![walker.draft(built.m, built.call.start(), Role::Sized, note)], Values::Unknown))
}
