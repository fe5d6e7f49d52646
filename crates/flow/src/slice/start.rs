//! Where the trail starts: the value the op refused, on the innermost user frame's line.
//! The names the process saw holding it come first; otherwise the op's call on the line
//! and its argument for the refused parameter (by keyword, by position in the functional
//! form, the method form or the module's `forward`); for indexing, the subscript's index.

use super::follow::{Cursor, Draft, Sel, Walker};
use super::names::line_offset;
use super::ops::{self, Op};
use super::project::Module;
use super::query::{Frame, Role};
use super::resolve::Object;
use crate::semantic::{argument, Bound, ScopeKind};
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextSize};

/// Where a trail starts: an expression on the line, or a local's value when it runs.
pub enum Start<'a> {
    Expr(Cursor<'a>),
    Name(Cursor<'a>, String, TextSize),
}

impl<'a> Start<'a> {
    pub fn cursor(&self) -> &Cursor<'a> {
        match self {
            Start::Expr(c) | Start::Name(c, _, _) => c,
        }
    }
}

/// The cursors of the operand on `frame`'s line, or why there is none.
pub fn operand<'a>(
    walker: &Walker<'_, 'a>,
    m: &'a Module<'a>,
    frame: &Frame,
) -> Result<Vec<Start<'a>>, Draft<'a>> {
    let offset = line_offset(m, frame.line);
    let fail = |note: String| Draft {
        m,
        at: offset,
        role: Role::Move,
        note,
        confirmed: false,
        observed: false,
        chain: walker.chain,
    };
    if frame.line == 0 || m.file.line_span(frame.line).is_empty() {
        return Err(fail(format!("line {} is not in {}", frame.line, m.display)));
    }
    let Some(stmt) = m.index.statement_at(offset) else {
        return Err(fail("no statement on this line".into()));
    };
    let scope = m.index.scope_at(offset);
    let base = |expr: &'a Expr, path: Vec<Sel>| Cursor { m, scope, expr, path, env: Default::default() };
    let operand = &walker.query.operand;
    let mut found: Vec<Cursor<'a>> = Vec::new();
    for holder in &operand.holders {
        let Some((name, path)) = holder_path(holder) else { continue };
        if let Some(expr) = named(stmt, name, offset) {
            found.push(base(expr, path));
        }
    }
    if !found.is_empty() {
        return Ok(found.into_iter().map(Start::Expr).collect());
    }
    let arguments = op_arguments(walker, m, scope, stmt, super::names::frame_range(m, frame));
    if !arguments.is_empty() {
        return Ok(arguments.into_iter().map(|e| Start::Expr(base(e, Vec::new()))).collect());
    }
    // The process saw a local holding it, but it is not on this line: its value when
    // the line runs.
    for holder in &operand.holders {
        let Some((name, path)) = holder_path(holder) else { continue };
        if m.sem.lookup(scope, name, stmt.start()).is_some() {
            if let Some(anchor) = anchor(stmt) {
                return Ok(vec![Start::Name(base(anchor, path), name.to_string(), stmt.start())]);
            }
        }
    }
    let what = operand.op.as_deref().map_or("the op".to_string(), |o| format!("`{o}`"));
    let parameter = operand.parameter.as_deref().map_or(String::new(), |p| format!(" (its `{p}`)"));
    Err(fail(format!("the value {what}{parameter} refused is not found on this line; not followed further")))
}

/// `batch["labels"]` as `("batch", [Key("labels")])`; `y` as `("y", [])`.
fn holder_path(holder: &str) -> Option<(&str, Vec<Sel>)> {
    let holder = holder.trim();
    let end = holder.find('[').unwrap_or(holder.len());
    let name = &holder[..end];
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let mut path = Vec::new();
    let mut rest = &holder[end..];
    while let Some(inner) = rest.strip_prefix('[') {
        let close = inner.find(']')?;
        let key = inner[..close].trim();
        let sel = if let Ok(i) = key.parse::<i64>() {
            Sel::Index(i)
        } else if key.len() >= 2
            && (key.starts_with('"') && key.ends_with('"') || key.starts_with('\'') && key.ends_with('\''))
        {
            Sel::Key(key[1..key.len() - 1].to_string())
        } else {
            return None;
        };
        path.push(sel);
        rest = &inner[close + 1..];
    }
    rest.is_empty().then_some((name, path))
}

/// The first read of `name` in the statement (at or after `from`).
fn named<'a>(stmt: &'a Stmt, name: &str, from: TextSize) -> Option<&'a Expr> {
    struct Find<'a, 'n> {
        name: &'n str,
        from: TextSize,
        found: Option<&'a Expr>,
    }
    impl<'a> Visitor<'a> for Find<'a, '_> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if self.found.is_some() {
                return;
            }
            if let Expr::Name(n) = expr {
                if n.id.as_str() == self.name && n.ctx.is_load() && n.range.start() >= self.from {
                    self.found = Some(expr);
                    return;
                }
            }
            visitor::walk_expr(self, expr);
        }
    }
    let mut find = Find { name, from, found: None };
    find.visit_stmt(stmt);
    find.found.or_else(|| {
        let mut again = Find { name, from: stmt.start(), found: None };
        again.visit_stmt(stmt);
        again.found
    })
}

/// The first expression of a statement, to stand for its position.
fn anchor(stmt: &Stmt) -> Option<&Expr> {
    struct First<'a>(Option<&'a Expr>);
    impl<'a> Visitor<'a> for First<'a> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if self.0.is_none() {
                self.0 = Some(expr);
            }
        }
    }
    let mut first = First(None);
    first.visit_stmt(stmt);
    first.0
}

/// The arguments of the op's calls on the line that hold the refused parameter; of a
/// table's calls, those of a table of the size the values broke.
fn op_arguments<'a>(
    walker: &Walker<'_, 'a>,
    m: &'a Module<'a>,
    scope: usize,
    stmt: &'a Stmt,
    marked: Option<ruff_text_size::TextRange>,
) -> Vec<&'a Expr> {
    let operand = &walker.query.operand;
    let named_op = operand.op.as_deref().and_then(ops::op);
    let parameter = operand.parameter.as_deref();
    let mut found: Vec<(&'a Expr, Option<f64>)> = Vec::new();
    for call in super::names::marked(super::calls::calls_in(stmt), marked) {
        let Some((op, form)) = call_form(walker, m, scope, call, named_op) else { continue };
        let Some(mut parameter) = parameter.or_else(|| default_parameter(op)) else { continue };
        let mut position = operand.position;
        // A name of another signature of the op (a compiled graph's `aten::embedding(weight,
        // indices)`): its position there says nothing here; the op's refused operand is the
        // one its index parameter is.
        if op.position(parameter).is_none() && op.forward_position(parameter).is_none() {
            let Some(default) = default_parameter(op) else { continue };
            parameter = default;
            position = None;
        }
        if let Some(arg) = argument_of(op, form, call, parameter, position) {
            found.push((arg, table_size(walker, m, scope, call)));
        }
    }
    if found.len() > 1 {
        if let Some(bound) = walker.query.bad.bound {
            if found.iter().any(|(_, size)| *size == Some(bound)) {
                found.retain(|(_, size)| *size == Some(bound));
            }
        }
    }
    if !found.is_empty() {
        return found.into_iter().map(|(e, _)| e).collect();
    }
    // Indexing: `x[idx]`, the index refused.
    let indexing = operand
        .op
        .as_deref()
        .is_none_or(|o| matches!(o, "index" | "index_select" | "__getitem__" | "getitem"))
        && parameter.is_none_or(|p| ops::same_parameter(p, "index"));
    if indexing {
        return index_in(stmt).into_iter().collect();
    }
    Vec::new()
}

/// The size of the table a module call looks up in (`nn.Embedding(32, …)` gives 32).
fn table_size<'a>(
    walker: &Walker<'_, 'a>,
    m: &'a Module<'a>,
    scope: usize,
    call: &'a ast::ExprCall,
) -> Option<f64> {
    let Some(Object::LibraryInstance(_, class, built)) = walker.project.resolve(m, scope, &call.func) else {
        return None;
    };
    let (name, position) = ops::size_argument(class)?;
    let size = argument(built.call, name, Some(position))?;
    let probe =
        Cursor { m: built.m, scope: built.scope, expr: size, path: Vec::new(), env: Default::default() };
    walker.constant(&probe, size)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    Functional,
    Method,
    Module,
}

/// Whether a call runs an op (the named one, or any the table knows), and in which form.
fn call_form<'a>(
    walker: &Walker<'_, 'a>,
    m: &'a Module<'a>,
    scope: usize,
    call: &'a ast::ExprCall,
    named: Option<&'static Op>,
) -> Option<(&'static Op, Form)> {
    let fits = |op: &'static Op| named.is_none_or(|n| std::ptr::eq(n, op) || same_family(n, op));
    match walker.project.resolve(m, scope, &call.func) {
        Some(Object::Api("torch", name)) => ops::op(name).filter(|o| fits(o)).map(|o| (o, Form::Functional)),
        Some(Object::LibraryInstance("torch", class, built)) => {
            if let Some(op) = ops::OPS.iter().find(|o| o.modules.contains(&class) && fits(o)) {
                return Some((op, Form::Module));
            }
            // `nn.Sequential(nn.Embedding(…), …)(ids)`: the first layer runs on the input.
            if class == "Sequential" {
                let first = built.call.arguments.args.first()?;
                if let Some(Object::LibraryInstance("torch", inner, _)) =
                    walker.project.resolve(built.m, built.scope, first)
                {
                    let op = ops::OPS.iter().find(|o| o.modules.contains(&inner) && fits(o))?;
                    return Some((op, Form::Module));
                }
            }
            None
        }
        Some(_) => None,
        None => match &*call.func {
            Expr::Attribute(attr) => {
                ops::op(attr.attr.as_str()).filter(|o| fits(o)).map(|o| (o, Form::Method))
            }
            Expr::Name(name) => {
                let class = parameter_class(walker, m, scope, name)?;
                ops::OPS.iter().find(|o| o.modules.contains(&class) && fits(o)).map(|o| (o, Form::Module))
            }
            _ => None,
        },
    }
}

/// The torch class of a parameter called as a module (`criterion(out, y)` in a training
/// step), when every call of the function in the project passes an instance of that one
/// class: whichever call ran, the module is of that class.
pub(super) fn parameter_class<'a>(
    walker: &Walker<'_, 'a>,
    m: &'a Module<'a>,
    scope: usize,
    name: &'a ast::ExprName,
) -> Option<&'a str> {
    parameter_class_at(walker, m, scope, name, 0)
}

/// [`parameter_class`], through callers that pass a parameter of their own (a training
/// step called by a training loop that got the loss as a parameter too).
fn parameter_class_at<'a>(
    walker: &Walker<'_, 'a>,
    m: &'a Module<'a>,
    scope: usize,
    name: &'a ast::ExprName,
    depth: u32,
) -> Option<&'a str> {
    if depth > 4 {
        return None;
    }
    let (_, binding) = m.sem.lookup(scope, name.id.as_str(), name.range.start())?;
    let Bound::Param { scope: function, index, name: param, .. } = binding.value else { return None };
    let ScopeKind::Function { class: owner, .. } = m.sem.scopes[function].kind else { return None };
    let position = super::calls::param_position(index, owner.is_some());
    let mut found: Option<&'a str> = None;
    for (cm, cscope, call) in walker.callers(m, function) {
        let arg = argument(call, param, position)?;
        let class = match (walker.project.resolve(cm, cscope, arg), arg) {
            (Some(Object::LibraryInstance("torch", class, _)), _) => class,
            (None, Expr::Name(passed)) => parameter_class_at(walker, cm, cscope, passed, depth + 1)?,
            _ => return None,
        };
        if found.is_some_and(|f| f != class) {
            return None;
        }
        found = Some(class);
    }
    found
}

/// Ops whose bad values mean the same thing (a cross_entropy call for an nll_loss kernel).
fn same_family(a: &Op, b: &Op) -> bool {
    let losses = ["cross_entropy", "nll_loss", "multi_margin_loss"];
    losses.contains(&a.functions[0]) && losses.contains(&b.functions[0])
        || a.functions[0].starts_with("embedding") && b.functions[0].starts_with("embedding")
        || (a.params.contains(&"index") && b.params.contains(&"index"))
}

fn default_parameter(op: &Op) -> Option<&'static str> {
    ["target", "targets", "index", "indices", "tensor", "input"].into_iter().find(|p| op.params.contains(p))
}

fn argument_of<'a>(
    op: &Op,
    form: Form,
    call: &'a ast::ExprCall,
    parameter: &str,
    position: Option<usize>,
) -> Option<&'a Expr> {
    let name = op.params.iter().find(|p| ops::same_parameter(p, parameter)).copied().unwrap_or(parameter);
    let functional = op.position(parameter).or(position);
    match form {
        Form::Functional => argument(call, name, functional),
        Form::Method => match functional? {
            0 => match &*call.func {
                Expr::Attribute(attr) => Some(&attr.value),
                _ => None,
            },
            p => argument(call, name, Some(p - 1)),
        },
        Form::Module => argument(call, name, op.forward_position(parameter)),
    }
}

/// The index of the first subscript with a computed index on the line.
fn index_in(stmt: &Stmt) -> Option<&Expr> {
    struct Find<'a>(Option<&'a Expr>);
    impl<'a> Visitor<'a> for Find<'a> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if self.0.is_some() {
                return;
            }
            if let Expr::Subscript(sub) = expr {
                if sub.ctx.is_load()
                    && !matches!(
                        &*sub.slice,
                        Expr::Slice(_) | Expr::NumberLiteral(_) | Expr::StringLiteral(_) | Expr::Tuple(_)
                    )
                {
                    self.0 = Some(&sub.slice);
                    return;
                }
            }
            visitor::walk_expr(self, expr);
        }
    }
    let mut find = Find(None);
    find.visit_stmt(stmt);
    find.0
}
