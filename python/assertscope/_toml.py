"""A reader for the part of TOML the knowledge base uses, for Pythons without tomllib (3.9, 3.10).

It reads comments, `[table]` and `[[array.of.tables]]` headers, bare, quoted and dotted keys,
the four kinds of strings, integers, floats, booleans, arrays and inline tables. Dates and
times are refused with a clear error: the knowledge base has none. On Python 3.11+ the
package uses tomllib instead; the tests check that both give the same result on every file.
"""

import re

__all__ = ["TOMLDecodeError", "loads"]


class TOMLDecodeError(ValueError):
    """A document that is not TOML (or uses a part of TOML this reader does not handle)."""


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_NUMBER = re.compile(
    r"[+-]?(?:0x[0-9A-Fa-f_]+|0o[0-7_]+|0b[01_]+|inf|nan|"
    r"(?:\d[\d_]*)(?:\.\d[\d_]*)?(?:[eE][+-]?\d[\d_]*)?)"
)
_DATE_LIKE = re.compile(r"\d{4}-\d{2}-\d{2}|\d{2}:\d{2}")
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}


def loads(text):
    """Parses a TOML document into nested dicts and lists, like tomllib.loads."""
    return _Parser(text).document()


class _Parser:
    def __init__(self, text):
        self.text = text
        self.pos = 0
        self.root = {}
        # Tables created by a [header] (may not be defined twice) and arrays made by [[header]].
        self.defined = set()
        self.table_arrays = set()

    # --- errors and low-level scanning -------------------------------------------------

    def error(self, message):
        line = self.text.count("\n", 0, self.pos) + 1
        column = self.pos - (self.text.rfind("\n", 0, self.pos) + 1) + 1
        return TOMLDecodeError(f"{message} (at line {line}, column {column})")

    def peek(self, n=1):
        return self.text[self.pos : self.pos + n]

    def skip_spaces(self):
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1

    def skip_comment(self):
        if self.peek() == "#":
            end = self.text.find("\n", self.pos)
            self.pos = len(self.text) if end < 0 else end

    def skip_blank(self):
        """Skips spaces, newlines and comments (inside arrays and between statements)."""
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch in " \t\r\n":
                self.pos += 1
            elif ch == "#":
                self.skip_comment()
            else:
                break

    def end_of_line(self):
        self.skip_spaces()
        self.skip_comment()
        if self.peek(2) == "\r\n":
            self.pos += 2
        elif self.peek() == "\n":
            self.pos += 1
        elif self.pos < len(self.text):
            raise self.error(f"expected the end of the line, found {self.peek()!r}")

    # --- document structure ------------------------------------------------------------

    def document(self):
        current = self.root
        while True:
            self.skip_blank()
            if self.pos >= len(self.text):
                return self.root
            if self.peek(2) == "[[":
                self.pos += 2
                path = self.key_path()
                self.skip_spaces()
                if self.peek(2) != "]]":
                    raise self.error("expected ']]' to close the array-of-tables header")
                self.pos += 2
                current = self.open_table_array(path)
            elif self.peek() == "[":
                self.pos += 1
                path = self.key_path()
                self.skip_spaces()
                if self.peek() != "]":
                    raise self.error("expected ']' to close the table header")
                self.pos += 1
                current = self.open_table(path)
            else:
                self.key_value(current)
            self.end_of_line()

    def descend(self, table, key):
        value = table.setdefault(key, {})
        if isinstance(value, list) and id(value) in self.table_arrays:
            value = value[-1]
        if not isinstance(value, dict):
            raise self.error(f"key {key!r} is already a value, not a table")
        return value

    def open_table(self, path):
        table = self.root
        for key in path:
            table = self.descend(table, key)
        if id(table) in self.defined:
            raise self.error(f"table [{'.'.join(path)}] is defined twice")
        self.defined.add(id(table))
        return table

    def open_table_array(self, path):
        table = self.root
        for key in path[:-1]:
            table = self.descend(table, key)
        array = table.setdefault(path[-1], [])
        if not isinstance(array, list) or id(array) not in self.table_arrays and array:
            raise self.error(f"key {path[-1]!r} is already a value, not an array of tables")
        self.table_arrays.add(id(array))
        entry = {}
        array.append(entry)
        self.defined.add(id(entry))
        return entry

    def key_value(self, table):
        path = self.key_path()
        self.skip_spaces()
        if self.peek() != "=":
            raise self.error("expected '=' after the key")
        self.pos += 1
        self.skip_spaces()
        value = self.value()
        for key in path[:-1]:
            table = self.descend(table, key)
        if path[-1] in table:
            raise self.error(f"key {path[-1]!r} is defined twice")
        table[path[-1]] = value

    def key_path(self):
        path = []
        while True:
            self.skip_spaces()
            ch = self.peek()
            if ch == '"':
                path.append(self.basic_string())
            elif ch == "'":
                path.append(self.literal_string())
            else:
                match = _BARE_KEY.match(self.text, self.pos)
                if not match:
                    raise self.error("expected a key")
                path.append(match.group())
                self.pos = match.end()
            self.skip_spaces()
            if self.peek() != ".":
                return path
            self.pos += 1

    # --- values -------------------------------------------------------------------------

    def value(self):
        ch = self.peek()
        if self.peek(3) == '"""':
            return self.multiline_basic_string()
        if self.peek(3) == "'''":
            return self.multiline_literal_string()
        if ch == '"':
            return self.basic_string()
        if ch == "'":
            return self.literal_string()
        if ch == "[":
            return self.array()
        if ch == "{":
            return self.inline_table()
        for word, result in (("true", True), ("false", False)):
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return result
        if _DATE_LIKE.match(self.text, self.pos):
            raise self.error("dates and times are not supported by this TOML reader")
        match = _NUMBER.match(self.text, self.pos)
        if not match or not match.group():
            raise self.error("expected a value")
        self.pos = match.end()
        return _number(match.group(), self.error)

    def array(self):
        self.pos += 1
        items = []
        while True:
            self.skip_blank()
            if self.peek() == "]":
                self.pos += 1
                return items
            items.append(self.value())
            self.skip_blank()
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "]":
                raise self.error("expected ',' or ']' in an array")

    def inline_table(self):
        self.pos += 1
        table = {}
        self.skip_spaces()
        if self.peek() == "}":
            self.pos += 1
            return table
        while True:
            self.key_value(table)
            self.skip_spaces()
            if self.peek() == "}":
                self.pos += 1
                return table
            if self.peek() != ",":
                raise self.error("expected ',' or '}' in an inline table")
            self.pos += 1

    def basic_string(self):
        self.pos += 1
        out = []
        while True:
            ch = self.peek()
            if ch == "":
                raise self.error("unterminated string")
            if ch == "\n":
                raise self.error("newline inside a single-line string")
            self.pos += 1
            if ch == '"':
                return "".join(out)
            out.append(self.escape() if ch == "\\" else ch)

    def multiline_basic_string(self):
        self.pos += 3
        if self.peek(2) == "\r\n":
            self.pos += 2
        elif self.peek() == "\n":
            self.pos += 1
        out = []
        while True:
            if self.pos >= len(self.text):
                raise self.error("unterminated multi-line string")
            if self.peek(3) == '"""':
                # Up to two quotes may stand right before the closing delimiter.
                extra = 0
                while extra < 2 and self.text[self.pos + 3 + extra : self.pos + 4 + extra] == '"':
                    extra += 1
                out.append('"' * extra)
                self.pos += 3 + extra
                return "".join(out)
            ch = self.text[self.pos]
            self.pos += 1
            if ch != "\\":
                out.append(ch)
                continue
            # A backslash at the end of a line trims the newline and the next line's indentation.
            rest = re.match(r"[ \t]*\r?\n", self.text[self.pos :])
            if rest:
                self.pos += rest.end()
                while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
                    self.pos += 1
            else:
                out.append(self.escape())

    def escape(self):
        ch = self.peek()
        self.pos += 1
        if ch in _ESCAPES:
            return _ESCAPES[ch]
        if ch in "uU":
            width = 4 if ch == "u" else 8
            digits = self.text[self.pos : self.pos + width]
            if not re.fullmatch(r"[0-9A-Fa-f]{%d}" % width, digits):
                raise self.error(f"bad \\{ch} escape")
            self.pos += width
            return chr(int(digits, 16))
        raise self.error(f"unknown escape \\{ch}")

    def literal_string(self):
        end = self.text.find("'", self.pos + 1)
        newline = self.text.find("\n", self.pos + 1)
        if end < 0 or 0 <= newline < end:
            raise self.error("unterminated literal string")
        value = self.text[self.pos + 1 : end]
        self.pos = end + 1
        return value

    def multiline_literal_string(self):
        self.pos += 3
        if self.peek(2) == "\r\n":
            self.pos += 2
        elif self.peek() == "\n":
            self.pos += 1
        end = self.text.find("'''", self.pos)
        if end < 0:
            raise self.error("unterminated multi-line literal string")
        while self.text[end + 3 : end + 4] == "'" and end + 3 - self.pos < len(self.text):
            end += 1
        value = self.text[self.pos : end]
        self.pos = end + 3
        return value


def _number(text, error):
    clean = text.replace("_", "")
    sign = -1 if clean.startswith("-") else 1
    body = clean.lstrip("+-")
    if body in ("inf", "nan"):
        return sign * float(body)
    for prefix, base in (("0x", 16), ("0o", 8), ("0b", 2)):
        if body.startswith(prefix):
            return int(body[2:], base)
    if any(c in body for c in ".eE"):
        return float(clean)
    if len(body) > 1 and body.startswith("0"):
        raise error("leading zeros are not allowed in integers")
    return int(clean)
