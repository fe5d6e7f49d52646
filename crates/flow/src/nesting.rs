//! How deeply a file's expressions nest, estimated from its characters before it is parsed.
//! The parser recurses once per nesting level, on a stack that grows for as long as the
//! nesting goes on: a file of a million unary minuses or brackets (generated, or written to
//! exhaust a reader) takes gigabytes to parse, and fails under an address-space limit.
//! CPython refuses such files outright ("too many nested parentheses", or a MemoryError in
//! its parser, past a few thousand levels), so one nested beyond [`MAX_NESTING`] is reported
//! as a syntax error and not parsed.
//!
//! The estimate counts what makes the parser recurse: brackets; prefix operators (`-x`,
//! `not x`, `await x`), open until their operand ends; and right-associative chains (`a **
//! b ** c`, `x if c else y if d else z`, `lambda: lambda: …`), open until the expression
//! ends. Strings and comments are skipped. It only needs to be right about depths far past
//! any real code, and never to find depth in a long flat expression.

/// Nesting past this is refused; real code stays under a hundred levels.
pub const MAX_NESTING: usize = 5000;

/// The byte offset where the nesting first goes past `limit`, if it does.
pub fn too_deep(text: &str, limit: usize) -> Option<usize> {
    let mut scan = Scan::default();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let next = bytes.get(i + 1).copied();
        i = match b {
            b'#' => memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |n| i + n),
            b'\'' | b'"' => {
                scan.operand();
                skip_string(bytes, i)
            }
            b'(' | b'[' | b'{' => {
                scan.open();
                i + 1
            }
            b')' | b']' | b'}' => {
                scan.close();
                i + 1
            }
            b':' => {
                scan.colon();
                i + 1
            }
            b'\n' | b',' | b';' => {
                scan.end_of_expression(b == b'\n');
                i + 1
            }
            b'.' | b' ' | b'\t' | b'\r' | b'\x0c' => i + 1,
            b'*' if next == Some(b'*') => {
                scan.power();
                i + 2
            }
            b'-' | b'+' | b'~' => {
                scan.prefix_or_binary();
                i + 1
            }
            b'=' if next != Some(b'=') => {
                scan.end_of_expression(false);
                i + 1
            }
            b'\\' => i + 2,
            _ if b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80 => {
                let end = i + bytes[i..]
                    .iter()
                    .take_while(|&&c| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80)
                    .count();
                scan.word(&bytes[i..end]);
                end
            }
            _ => {
                scan.operator();
                i + 1
            }
        };
        if scan.depth() > limit {
            return Some(i.min(bytes.len()).saturating_sub(1));
        }
    }
    None
}

/// What is open at one bracket level.
#[derive(Default, Clone, Copy)]
struct Level {
    /// Prefix operators waiting for their operand.
    prefix: usize,
    /// `**` operators, open until an operator that binds less tightly.
    power: usize,
    /// `lambda` and `else`, open until the expression ends.
    right: usize,
    /// `lambda`s still before their `:`.
    lambdas: usize,
}

impl Level {
    fn open(&self) -> usize {
        self.prefix + self.power + self.right
    }
}

/// The open levels: one per bracket, with the prefix operators and right-associative
/// chains open in each.
#[derive(Default)]
struct Scan {
    /// Per open bracket: the levels open outside it at its own bracket level.
    stack: Vec<Level>,
    /// The levels open at the current bracket level.
    level: Level,
    /// Whether the last token ended an operand (so `-` is binary, not a prefix).
    after_operand: bool,
    /// The sum of the open levels of the enclosing brackets.
    outer: usize,
}

impl Scan {
    fn depth(&self) -> usize {
        self.outer + self.level.open()
    }

    fn open(&mut self) {
        self.outer += 1 + self.level.open();
        self.stack.push(std::mem::take(&mut self.level));
        self.after_operand = false;
    }

    fn close(&mut self) {
        let Some(level) = self.stack.pop() else { return };
        self.outer -= 1 + level.open();
        self.level = level;
        self.operand();
    }

    /// An operand ends the prefix operators before it.
    fn operand(&mut self) {
        self.level.prefix = 0;
        self.after_operand = true;
    }

    fn prefix_or_binary(&mut self) {
        if self.after_operand {
            self.operator();
        } else {
            self.level.prefix += 1;
        }
    }

    /// A binary operator: it ends a `**` chain (every other binds less tightly).
    fn operator(&mut self) {
        self.level.power = 0;
        self.after_operand = false;
    }

    fn power(&mut self) {
        self.level.power += 1;
        self.after_operand = false;
    }

    fn right(&mut self) {
        self.level.right += 1;
        self.after_operand = false;
    }

    /// The `:` of a `lambda` goes on with its body; any other ends an expression (a
    /// slice, a dict key, a block's header).
    fn colon(&mut self) {
        if self.level.lambdas > 0 {
            self.level.lambdas -= 1;
            self.after_operand = false;
        } else {
            self.end_of_expression(false);
        }
    }

    fn end_of_expression(&mut self, newline: bool) {
        // A line break inside brackets does not end anything.
        if newline && !self.stack.is_empty() {
            return;
        }
        self.level = Level::default();
        self.after_operand = false;
    }

    fn word(&mut self, word: &[u8]) {
        match word {
            b"not" | b"await" | b"yield" => {
                self.level.prefix += 1;
                self.after_operand = false;
            }
            b"lambda" => {
                self.level.lambdas += 1;
                self.right();
            }
            b"else" => self.right(),
            b"and" | b"or" | b"in" | b"is" | b"if" | b"return" | b"del" | b"assert" | b"raise" | b"from"
            | b"import" | b"for" | b"while" | b"elif" | b"with" | b"as" => self.operator(),
            _ => self.operand(),
        }
    }
}

/// The index past the string literal starting at `start` (a quote), triple-quoted or not.
fn skip_string(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let triple = bytes.get(start..start + 3) == Some(&[quote, quote, quote][..]);
    let mut i = start + if triple { 3 } else { 1 };
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'\n' if !triple => return i,
            c if c == quote => {
                if !triple {
                    return i + 1;
                }
                if bytes.get(i..i + 3) == Some(&[quote, quote, quote][..]) {
                    return i + 3;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_over(text: &str, limit: usize) -> bool {
        too_deep(text, limit).is_some()
    }

    #[test]
    fn deep_nesting_of_every_kind_is_found() {
        for (text, depth) in [
            (format!("x = {}1", "-".repeat(3000)), 3000),
            (format!("x = {}1", "not ".repeat(3000)), 3000),
            (format!("x = {}1{}", "(".repeat(3000), ")".repeat(3000)), 3000),
            (format!("x = {}1{}", "-(".repeat(1500), ")".repeat(1500)), 3000),
            (format!("x = a{}", " ** a".repeat(3000)), 3000),
            (format!("x = {}0", "a if b else ".repeat(3000)), 3000),
            (format!("f = {}0", "lambda: ".repeat(3000)), 3000),
            (format!("x = [{}]", "[".repeat(2999) + &"]".repeat(2999)), 3000),
        ] {
            assert!(depth_over(&text, depth - 10), "{}", &text[..40]);
            assert!(!depth_over(&text, depth + 10), "{}", &text[..40]);
        }
    }

    #[test]
    fn long_flat_expressions_are_shallow() {
        let values = (0..100_000).map(|i| format!("-{i}")).collect::<Vec<_>>().join(", ");
        let squares = (0..100_000).map(|i| format!("a{i} ** 2")).collect::<Vec<_>>().join(" + ");
        let sum = (0..100_000).map(|i| format!("not x{i}")).collect::<Vec<_>>().join(" and ");
        let strings = format!("s = '{}' \"((((\" '''\n((((\n'''  # (((( \n", "(".repeat(10_000));
        let lines = "x = -a - -b\ny = (1 +\n  -2)\n".repeat(50_000);
        for text in
            [format!("x = [{values}]"), format!("y = {squares}"), format!("z = {sum}"), strings, lines]
        {
            assert!(!depth_over(&text, 50), "{}", &text[..40]);
        }
    }
}
