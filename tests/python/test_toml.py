"""The TOML reader used on Python 3.9/3.10 gives exactly what tomllib gives."""

import glob
import os
import subprocess
import sys

import pytest

from assertscope import _toml
from assertscope.kb import KB_DIR

from test_guard_api import find_python

tomllib = pytest.importorskip("tomllib")

KB_FILES = sorted(glob.glob(os.path.join(KB_DIR, "*.toml")))


def test_the_kb_has_files():
    assert {os.path.basename(p) for p in KB_FILES} >= {"causes.toml", "asserts.toml", "messages.toml", "ops.toml", "followons.toml"}


@pytest.mark.parametrize("path", KB_FILES, ids=os.path.basename)
def test_every_kb_file_reads_as_with_tomllib(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert _toml.loads(text) == tomllib.loads(text)


DOCUMENT = r'''
# a comment
title = "basic \"quoted\" \u00e9 \\ tab\tend"
literal = 'C:\no\escapes'
multi = """
first line \
    continued
second "line" ""
"""
raw = LITERAL
keep \n as is
LITERAL
numbers = [1, -2, +3, 1_000, 0x1F, 0o17, 0b101, 3.5, -1e3, inf, -inf]
flags = [true, false]
nested = [[1, 2], ["a", 'b'], [
    "multi-line", # comment inside
]]
inline = { a = 1, "b c" = "d", e.f = 2 }
dotted.key = "v"

[table]
x = 1

[table.sub]
y = 2

[[items]]
name = "one"

[[items]]
name = "two"
[items.extra]
z = 3
'''.replace("LITERAL", "'" * 3)


def test_a_document_with_every_supported_construct():
    assert _toml.loads(DOCUMENT) == tomllib.loads(DOCUMENT)


def test_dates_are_refused_clearly():
    with pytest.raises(_toml.TOMLDecodeError, match="dates and times are not supported by this TOML reader .at line 1"):
        _toml.loads("a = 1979-05-27")


@pytest.mark.parametrize(
    "text, message",
    [
        ('a = "open', "unterminated string"),
        ("a = 1\na = 2", "defined twice"),
        ("a = 01", "leading zeros"),
        ("a = [1 2]", "expected ',' or ']'"),
        ("[t]\n[t]", "defined twice"),
        ("a = ", "expected a value"),
    ],
)
def test_errors_say_what_and_where(text, message):
    with pytest.raises(_toml.TOMLDecodeError, match=message) as info:
        _toml.loads(text)
    assert "line" in str(info.value)
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads(text)


@pytest.mark.parametrize("version", ["3.9", "3.10"])
def test_old_pythons_read_the_kb_like_tomllib(version):
    python = find_python(version)
    if python is None:
        pytest.skip(f"no python{version}")
    import json

    from conftest import PYTHON_DIR

    code = (
        "import json, glob, os, sys; from assertscope import _toml; from assertscope.kb import KB_DIR\n"
        "print(json.dumps({os.path.basename(p): _toml.loads(open(p, encoding='utf-8').read()) for p in sorted(glob.glob(os.path.join(KB_DIR, '*.toml')))}))"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": PYTHON_DIR}, check=True).stdout
    expected = {os.path.basename(p): tomllib.loads(open(p, encoding="utf-8").read()) for p in KB_FILES}
    assert json.loads(out) == json.loads(json.dumps(expected))
