//! explain, with the source at hand: when CUDA reported an error asynchronously, the
//! traceback's line is only where it surfaced (`loss.item()`); the op that asserted ran
//! before. When the user's file exists on disk, this reads it and names that op's call (the
//! `criterion(...)` before the `.item()`) as a second location, role `call`.
//!
//! A line calls the op when it matches one of the op's call patterns (`ops.toml`), or calls
//! a name bound in the file to one (`criterion = nn.CrossEntropyLoss()`); ops whose bad
//! values mean the same cause count (cross_entropy for an nll_loss kernel). For lookups
//! that run inside a model (embedding, indexing), a call of an instance of a class defined
//! in the file counts too. The search goes up from the surfacing line to the start of its
//! function, then, for a line at the top of a loop, down the rest of the loop's body.

use crate::kb::KnowledgeBase;
use crate::report::OriginLocation;

/// Sources larger than this are not read (a generated file, not a training script).
const MAX_SOURCE: u64 = 4 << 20;

/// The call of the asserting op that ran before `line` of `file`, if the file is readable.
pub fn call_before(
    kb: &KnowledgeBase,
    file: &str,
    line: Option<u64>,
    op: Option<&str>,
    cause: &str,
) -> Option<OriginLocation> {
    let line = usize::try_from(line?).ok()?.checked_sub(1)?;
    let path = std::path::Path::new(file);
    if std::fs::metadata(path).ok()?.len() > MAX_SOURCE {
        return None;
    }
    let source = std::fs::read_to_string(path).ok()?;
    let lines: Vec<&str> = source.lines().collect();
    let surfaced = lines.get(line)?;
    let callables = Callables::of(kb, &lines, op, cause);
    let (start, function) = enclosing_function(&lines, line);
    let calls = |code: &str| callables.calls(kb, code, op, cause);
    let found = (start..line).rev().find(|&i| calls(lines[i])).or_else(|| {
        let header =
            (start..line).rev().find(|&i| is_loop_header(lines[i]) && indent(lines[i]) < indent(surfaced))?;
        let body = indent(lines[header]);
        (line + 1..lines.len())
            .take_while(|&i| lines[i].trim().is_empty() || indent(lines[i]) > body)
            .find(|&i| calls(lines[i]))
    })?;
    if calls(surfaced) {
        return None; // the op runs on the surfacing line itself: nothing to add
    }
    let what = op.map_or("the asserting op".to_string(), |o| format!("the {o} call"));
    Some(OriginLocation {
        file: file.to_string(),
        line: Some(found as u64 + 1),
        function: Some(function),
        code: Some(lines[found].trim().to_string()),
        role: "call".into(),
        chain: None,
        note: Some(format!("{what} that ran before the line where the error surfaced")),
        confirmed: false,
    })
}

/// Names bound in the file to something that runs the op.
struct Callables {
    names: Vec<String>,
}

impl Callables {
    fn of(kb: &KnowledgeBase, lines: &[&str], op: Option<&str>, cause: &str) -> Callables {
        let inside_models = matches!(cause, "embedding-index-out-of-range" | "index-out-of-bounds");
        let classes: Vec<&str> = if inside_models {
            lines
                .iter()
                .filter_map(|l| l.trim_start().strip_prefix("class "))
                .filter_map(|rest| identifier(rest))
                .collect()
        } else {
            Vec::new()
        };
        let mut names = Vec::new();
        for l in lines {
            let Some((target, value)) = assignment(l) else { continue };
            let value = value.trim();
            let constructs_model = classes
                .iter()
                .any(|c| value.starts_with(c) && value[c.len()..].trim_start().starts_with('('));
            if constructs_model || runs_op(kb, value, op, cause) {
                names.push(target.to_string());
            }
        }
        Callables { names }
    }

    fn calls(&self, kb: &KnowledgeBase, code: &str, op: Option<&str>, cause: &str) -> bool {
        let code = strip_comment(code);
        if code.trim().is_empty() || is_definition(code) {
            return false;
        }
        if let Some((target, value)) = assignment(code) {
            if self.names.iter().any(|n| n == target)
                && !calls_name(value, target)
                && runs_op(kb, value, op, cause)
            {
                return false; // the binding itself (`criterion = nn.CrossEntropyLoss()`)
            }
        }
        runs_op(kb, code, op, cause) || self.names.iter().any(|n| calls_name(code, n))
    }
}

fn runs_op(kb: &KnowledgeBase, code: &str, op: Option<&str>, cause: &str) -> bool {
    kb.op_of_frame(None, Some(code), false)
        .is_some_and(|o| Some(o.name.as_str()) == op || o.bad_values.as_deref() == Some(cause))
}

/// `name = value` (also `self.name = value`), not `==` or an augmented assignment.
fn assignment(line: &str) -> Option<(&str, &str)> {
    let code = strip_comment(line).trim();
    let i = code.find('=')?;
    let (left, right) = (code[..i].trim_end(), &code[i + 1..]);
    if right.starts_with('=') || left.ends_with(['!', '<', '>', '+', '-', '*', '/', '%', '&', '|', '^', ':'])
    {
        return None;
    }
    let target = left.strip_prefix("self.").unwrap_or(left);
    identifier(target).filter(|id| id.len() == target.len()).map(|id| (id, right))
}

fn identifier(text: &str) -> Option<&str> {
    let end = text.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(text.len());
    (end > 0 && !text.starts_with(|c: char| c.is_ascii_digit())).then(|| &text[..end])
}

/// `name(` or `self.name(` as a call, not as part of a longer name.
fn calls_name(code: &str, name: &str) -> bool {
    code.match_indices(name).any(|(i, _)| {
        let before = code[..i].chars().next_back();
        let after = code[i + name.len()..].trim_start();
        before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
            && (before != Some('.') || code[..i].ends_with("self."))
            && after.starts_with('(')
    })
}

fn strip_comment(line: &str) -> &str {
    // Good enough for code lines: a `#` inside a string only shortens what is searched.
    line.split_once('#').map_or(line, |(code, _)| code)
}

fn is_definition(code: &str) -> bool {
    let t = code.trim_start();
    t.starts_with("def ") || t.starts_with("async def ") || t.starts_with("class ")
}

fn is_loop_header(code: &str) -> bool {
    let t = code.trim_start();
    (t.starts_with("for ") || t.starts_with("async for ") || t.starts_with("while "))
        && t.trim_end().ends_with(':')
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// (first line index of the body, name) of the function holding `line`; the module's
/// first line and `<module>` at top level.
fn enclosing_function(lines: &[&str], line: usize) -> (usize, String) {
    let mut level = indent(lines[line]);
    for i in (0..line).rev() {
        let l = lines[i];
        if l.trim().is_empty() || indent(l) >= level {
            continue;
        }
        level = indent(l);
        let t = l.trim_start();
        if let Some(rest) = t.strip_prefix("def ").or_else(|| t.strip_prefix("async def ")) {
            return (i + 1, identifier(rest).unwrap_or("?").to_string());
        }
        if level == 0 {
            break;
        }
    }
    (0, "<module>".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_and_calls() {
        assert_eq!(
            assignment("    criterion = nn.CrossEntropyLoss()"),
            Some(("criterion", " nn.CrossEntropyLoss()"))
        );
        assert_eq!(
            assignment("        self.loss_fn = nn.NLLLoss()  # x"),
            Some(("loss_fn", " nn.NLLLoss()"))
        );
        assert_eq!(assignment("    if a == b:"), None);
        assert_eq!(assignment("    total += loss.item()"), None);
        assert!(calls_name("    loss = criterion(out, y)", "criterion"));
        assert!(calls_name("    loss = self.criterion (out, y)", "criterion"));
        assert!(!calls_name("    loss = my_criterion(out, y)", "criterion"));
        assert!(!calls_name("    loss = other.criterion(out, y)", "criterion"));
    }

    #[test]
    fn enclosing_function_of_a_loop_body() {
        let lines =
            ["import torch", "def train(model):", "    for x in xs:", "        y = model(x)", "print(1)"];
        assert_eq!(enclosing_function(&lines, 3), (2, "train".to_string()));
        assert_eq!(enclosing_function(&lines, 4), (0, "<module>".to_string()));
    }
}
