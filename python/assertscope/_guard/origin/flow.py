"""Where a value was made, read from the source: the assignment that last bound a name
before the line that used it, followed through function parameters to the caller.

What: given a live user frame and the object that failed, find the local name holding it,
then the statement that bound that name (skipping moves such as `.to(device)`), and for a
sized object the names its size came from (`nn.Linear(32, num_classes)` -> `num_classes = ...`).
Why: the op's line shows where a bad value was used; this names the line that made it.
Only the error path runs this; sources are parsed once per file.
"""

import ast
import linecache

from ... import _frames

# `x = x.to(device)` and the like move or re-view a value without making it: look further up.
_MOVES = {"to", "cuda", "cpu", "detach", "contiguous", "clone", "pin_memory", "requires_grad_"}
_trees = {}


def tree(filename):
    if filename not in _trees:
        source = "".join(linecache.getlines(filename))
        try:
            _trees[filename] = ast.parse(source) if source else None
        except (SyntaxError, ValueError):
            _trees[filename] = None
    return _trees[filename]


def _scope(root, line):
    """The innermost function (or the module) whose body holds `line`."""
    best = root
    for node in ast.walk(root):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            end = getattr(node, "end_lineno", node.lineno)
            if node.lineno <= line <= end and (best is root or node.lineno >= best.lineno):
                best = node
    return best


def _own_nodes(scope):
    """Nodes of a scope, not descending into nested functions or classes."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _binds(target, name):
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target))


def bindings(filename, line, name):
    """[(line, kind, node)] binding `name` in the scope of `line`, in source order.
    kind: "assign" (node is the value expression), "for" (node is the iterable), "param"."""
    root = tree(filename)
    if root is None:
        return []
    scope = _scope(root, line)
    found = []
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = scope.args
        every = args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]
        if any(a.arg == name for a in every):
            found.append((scope.lineno, "param", None))
    for node in _own_nodes(scope):
        if isinstance(node, ast.Assign) and any(_binds(t, name) for t in node.targets):
            found.append((node.lineno, "assign", node.value))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and _binds(node.target, name) and node.value is not None:
            found.append((node.lineno, "assign", node.value))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and _binds(node.value, name):
            found.append((node.lineno, "assign", None))  # `labels[mask] = -1` changes it in place
        elif isinstance(node, (ast.For, ast.AsyncFor)) and _binds(node.target, name):
            found.append((node.lineno, "for", node.iter))
        elif isinstance(node, ast.NamedExpr) and node.target.id == name:
            found.append((node.lineno, "assign", node.value))
    found.sort(key=lambda item: item[0])
    return found


def _module_bindings(filename, name):
    root = tree(filename)
    return bindings(filename, 0, name) if root is not None else []


def _is_move(value, name):
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in _MOVES
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == name
    )


def made_at(filename, line, name):
    """(line, kind, node) of the binding of `name` that reached `line`, or None. A name a
    function does not bind is a global: its last module-level binding before `line`, else
    its first."""
    root = tree(filename)
    if root is None:
        return None
    found = bindings(filename, line, name)
    if not found and _scope(root, line) is not root:
        found = _module_bindings(filename, name)
        before = [b for b in found if b[0] < line] or found[:1]
        return before[-1] if before else None
    before = [b for b in found if b[0] < line or b[1] == "param"]
    while before:
        found = before.pop()
        if found[1] == "assign" and found[2] is not None and _is_move(found[2], name):
            continue
        return found
    return None


def _identical(value, target):
    if value is target:
        return True
    base = getattr(target, "_base", None)
    return base is not None and value is base


def name_holding(frame, target):
    """The local (or global, at module level) name whose value is `target`, a view of it, or
    a small container holding it."""
    names = frame.f_locals
    for name, value in names.items():
        if _identical(value, target):
            return name
    for name, value in names.items():
        items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
        if len(items) <= 32 and any(_identical(v, target) for v in items):
            return name
    return None


def user_frames(frame):
    """The live user frames from `frame` outwards."""
    while frame is not None:
        if _frames.is_user_file(frame.f_code.co_filename):
            yield frame
        frame = frame.f_back


def trace_value(frames, target, limit=4):
    """Follows `target` from the innermost user frame to where it was made.

    Returns (location, kind, frame, node): kind "assign" (location is the making line), "for"
    (it came from iterating `node` at location), or None when the value cannot be followed."""
    frames = list(frames)
    for depth, frame in enumerate(frames[:limit]):
        name = name_holding(frame, target)
        if name is None:
            return None
        filename = frame.f_code.co_filename
        found = made_at(filename, frame.f_lineno, name)
        if found is None:
            return None
        line, kind, node = found
        if kind == "param":
            continue  # the caller passed it: look there
        return (filename, line, frame.f_code.co_name), kind, frame, node
    return None


def names_in(node):
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name)] if node is not None else []


def size_origin(filename, line, function=None, skip=()):
    """The binding lines of the plain names used at `line` (`nn.Linear(32, num_classes)` ->
    where `num_classes` was set), innermost scope first; constants and modules are skipped."""
    root = tree(filename)
    if root is None:
        return []
    statement = _statement_at(root, line)
    if statement is None:
        return []
    calls = [_constructor(n) for n in ast.walk(statement) if isinstance(n, ast.Call) and n.lineno == line]
    arguments = [a for call in calls[:1] for a in call.args + [k.value for k in call.keywords]]
    if not calls and isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
        arguments = [statement.value]
    span = range(statement.lineno, getattr(statement, "end_lineno", statement.lineno) + 1)
    found = []
    for name in dict.fromkeys(n for a in arguments for n in names_in(a)):
        if name in skip or name in ("self", "nn", "torch", "F", "len", "int", "max", "min"):
            continue
        made = made_at(filename, line, name)
        if made and made[1] == "assign" and made[0] not in span:
            found.append((filename, made[0], name))
    return found


# Methods that move or switch a module without sizing it: `Model(n).to(device)` is sized by
# the arguments of `Model(n)`, not by `device`.
_MOVES = frozenset({"to", "cuda", "cpu", "half", "float", "double", "bfloat16", "train", "eval", "requires_grad_"})


def _constructor(call):
    while isinstance(call.func, ast.Attribute) and call.func.attr in _MOVES and isinstance(call.func.value, ast.Call):
        call = call.func.value
    return call


def _statement_at(root, line):
    best = None
    for node in ast.walk(root):
        if isinstance(node, ast.stmt) and node.lineno <= line <= getattr(node, "end_lineno", node.lineno):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.While, ast.If, ast.With, ast.Try)):
                best = node
    return best


def keyword_at(filename, line, keyword):
    """The expression passed as `keyword=` in the statement at `line` (or None)."""
    root = tree(filename)
    statement = _statement_at(root, line) if root is not None else None
    if statement is None:
        return None
    for node in ast.walk(statement):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == keyword:
                    return kw.value
    return None


def attribute_sources(filename, line, element=None):
    """For a line that reads `self.NAME` (the `element`-th item of a returned tuple, when
    given), the lines in the same class that assign `self.NAME`: where a table was filled."""
    root = tree(filename)
    statement = _statement_at(root, line) if root is not None else None
    if statement is None:
        return []
    expr = statement
    if element is not None and isinstance(statement, ast.Return) and isinstance(statement.value, ast.Tuple):
        if element < len(statement.value.elts):
            expr = statement.value.elts[element]
    elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return)) and statement.value is not None:
        expr = statement.value
    attributes = {
        n.attr
        for n in ast.walk(expr)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
    }
    if not attributes:
        return []
    owner = next(
        (
            c
            for c in ast.walk(root)
            if isinstance(c, ast.ClassDef) and c.lineno <= line <= getattr(c, "end_lineno", c.lineno)
        ),
        None,
    )
    if owner is None:
        return []
    found = []
    for node in ast.walk(owner):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.lineno != line:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and target.attr in attributes and isinstance(target.value, ast.Name) and target.value.id == "self":
                    found.append(node.lineno)
    return sorted(set(found))


def batch_reshapes(filename, line):
    """Lines of `x.view(-1, K)` / `x.reshape(-1, K)` in the forward of the class whose body
    holds `line` (where one of its layers was built): a -1 in the batch position keeps the
    element count but changes the batch size when K is not the real per-sample size."""
    root = tree(filename)
    if root is None:
        return []
    owner = None
    for node in ast.walk(root):
        if isinstance(node, ast.ClassDef) and node.lineno <= line <= getattr(node, "end_lineno", node.lineno):
            owner = node
    if owner is None:
        return []
    found = []
    for method in owner.body:
        if not (isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.name == "forward"):
            continue
        for node in ast.walk(method):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("view", "reshape")
                and len(node.args) >= 2
                and _is_minus_one(node.args[0])
            ):
                found.append(node.lineno)
    return sorted(set(found))


def _is_minus_one(node):
    return (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and node.operand.value == 1
    )
