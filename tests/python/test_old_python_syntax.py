"""The package supports Python 3.9 (pyproject's requires-python). test_guard_api runs it
under real 3.9 and 3.10 interpreters where the machine has them; this test holds on every
machine: every module parses as Python 3.9 grammar, and none imports a standard-library
module that 3.9 lacks."""

import ast
import pathlib
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "python" / "assertscope"
MODULES = sorted(PACKAGE.rglob("*.py"))

# Standard-library modules added after 3.9 (What's New in Python 3.10 to 3.13).
NEWER_THAN_3_9 = {"tomllib", "wsgiref.types"}


def test_the_package_has_modules():
    assert len(MODULES) > 20


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_is_python_3_9(path):
    source = path.read_text(encoding="utf-8")
    # feature_version makes the parser reject grammar newer than 3.9: match statements,
    # parenthesised context managers, except*, type aliases and parameter lists.
    tree = ast.parse(source, filename=str(path), feature_version=(3, 9))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported.add(node.module)
    assert not imported & NEWER_THAN_3_9, f"{path.name} imports {imported & NEWER_THAN_3_9}"


def test_a_newer_grammar_is_refused():
    with pytest.raises(SyntaxError):
        ast.parse("match x:\n    case 1:\n        pass\n", feature_version=(3, 9))
    if sys.version_info >= (3, 11):
        with pytest.raises(SyntaxError):
            ast.parse("try:\n    pass\nexcept* ValueError:\n    pass\n", feature_version=(3, 9))
