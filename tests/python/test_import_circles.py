"""No import circles between the modules of python/assertscope, function-level imports
included: an import inside a function is deferred, not absent, and a circle through one is
a module that cannot be read (or imported alone) without the others."""

import ast
import pathlib
import textwrap

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "python" / "assertscope"


def modules(root):
    """Dotted name ("assertscope._guard.origin.loader") -> file, for every .py under root."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported(module, path, known):
    """The known modules that `module`'s code imports, anywhere in the file."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            # `from x import y`: y is a module when x.y is one, else a name defined in x.
            names = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source for alias in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]  # `import a.b.c` of an attribute path
            if name and name != module:
                targets.add(name)
    return targets


def circles(edges):
    """Strongly connected components of two or more modules (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def graph(root):
    known = modules(root)
    return {name: imported(name, path, known) for name, path in known.items()}


def describe(circle, edges):
    lines = [", ".join(circle)]
    lines += [f"    {a} -> {b}" for a in circle for b in sorted(edges[a]) if b in circle]
    return "\n".join(lines)


def test_the_package_has_no_import_circle():
    edges = graph(PACKAGE)
    assert len(edges) > 50, "the package's modules were not found"
    found = circles(edges)
    assert not found, "import circles:\n" + "\n".join(describe(c, edges) for c in found)


def test_a_circle_through_a_function_level_import_is_seen(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "from . import a\n",
        "a.py": "from .sub import b\n",
        "sub/__init__.py": "",
        "sub/b.py": "def late():\n    from .. import a\n    return a\n",
        "c.py": "import pkg.sub.b  # one way only\n",
    }
    for name, text in files.items():
        (package / name).write_text(textwrap.dedent(text))
    edges = graph(package)
    assert edges["pkg.c"] == {"pkg.sub.b"}
    assert edges["pkg"] == {"pkg.a"}
    assert circles(edges) == [["pkg.a", "pkg.sub.b"]]
