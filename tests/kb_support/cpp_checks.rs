//! The checks a piece of PyTorch's C++ or CUDA source makes, read from the text: each check
//! macro's condition and the message its arguments build (`{}` for every value inserted).
//! Used by tests/kb_value_checks.rs to generate the catalogue of value checks.

/// One check as a source states it.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub macro_name: String,
    pub condition: String,
    pub template: String,
}

const MACROS: [&str; 9] = [
    "TORCH_CHECK_INDEX",
    "TORCH_CHECK_VALUE",
    "TORCH_CHECK_IF_NOT_ON_CUDA",
    "TORCH_CHECK",
    "CUDA_KERNEL_ASSERT_MSG",
    "CUDA_KERNEL_ASSERT",
    "AT_ERROR",
    "THArgCheck",
    // THC and THCUNN kernels used the device's own assert(), which prints its condition.
    "assert",
];

/// The arguments of the call whose `(` is at `open`, split at top-level commas, and the
/// index just past its `)`.
fn call_arguments(code: &str, open: usize) -> Option<(Vec<String>, usize)> {
    let bytes = code.as_bytes();
    let (mut depth, mut at, mut start) = (0usize, open, open + 1);
    let mut args = Vec::new();
    while at < bytes.len() {
        match bytes[at] {
            b'"' | b'\'' => {
                let quote = bytes[at];
                at += 1;
                while at < bytes.len() && bytes[at] != quote {
                    at += if bytes[at] == b'\\' { 2 } else { 1 };
                }
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    args.push(code[start..at].trim().to_string());
                    return Some((args, at + 1));
                }
            }
            b',' if depth == 1 => {
                args.push(code[start..at].trim().to_string());
                start = at + 1;
            }
            _ => {}
        }
        at += 1;
    }
    None
}

/// An argument's text when it is only string literals (adjacent literals concatenate).
fn literal_text(arg: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = arg.trim().chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        if c != '"' {
            return None;
        }
        any = true;
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('n') => out.push('\n'),
                    Some(e) => out.push(e),
                    None => {}
                },
                '"' => break,
                c => out.push(c),
            }
        }
    }
    any.then_some(out)
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The message a check builds from its message arguments: literals as they are, `{}` for
/// every value it inserts; printf conversions (THArgCheck) are values too.
fn template_of(args: &[String]) -> String {
    let mut out = String::new();
    for arg in args {
        match literal_text(arg) {
            Some(text) => out.push_str(&text),
            None => out.push_str("{}"),
        }
    }
    printf_values(&out)
}

fn printf_values(s: &str) -> String {
    let re = regex::Regex::new(r"%[-+ #0-9.]*(?:l{0,2}|z|h)[dixXufgesc]").unwrap();
    re.replace_all(s, "{}").into_owned()
}

/// The condition of the `if` whose body a statement at `at` is in.
fn enclosing_if(code: &str, at: usize) -> Option<String> {
    let before = &code[..at];
    let open = before.rfind("if (")? + 3;
    let (args, _) = call_arguments(code, open)?;
    Some(format!("!({})", collapse(&args.join(", "))))
}

/// Where the call `name(` starts at or after `from`, as a whole word (`assert(` is not the
/// end of `static_assert(`).
fn find_macro(code: &str, from: usize, name: &str) -> Option<usize> {
    let call = format!("{name}(");
    let mut at = from;
    while let Some(i) = code[at..].find(&call) {
        let start = at + i;
        let word_start = code[..start].chars().last().is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        if word_start {
            return Some(start);
        }
        at = start + call.len();
    }
    None
}

/// Every check macro of a piece of source.
pub fn checks_in(code: &str) -> Vec<Check> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < code.len() {
        let found = MACROS
            .iter()
            .filter_map(|m| find_macro(code, at, m).map(|i| (i, *m)))
            .min_by_key(|(i, m)| (*i, std::cmp::Reverse(m.len())));
        let Some((start, name)) = found else { break };
        let open = start + name.len();
        let Some((args, end)) = call_arguments(code, open) else { break };
        at = end;
        let check = match name {
            "AT_ERROR" => Check {
                macro_name: name.into(),
                condition: enclosing_if(code, start).unwrap_or_default(),
                template: template_of(&args),
            },
            "CUDA_KERNEL_ASSERT" | "assert" => {
                Check { macro_name: name.into(), condition: collapse(&args[0]), template: collapse(&args[0]) }
            }
            "THArgCheck" => Check {
                macro_name: name.into(),
                condition: collapse(&args[0]),
                template: template_of(&args[2..3.min(args.len())]),
            },
            _ if args.len() == 1 => Check {
                macro_name: name.into(),
                condition: collapse(&args[0]),
                // TORCH_CHECK without a message prints its condition.
                template: format!("Expected {} to be true, but got false.", collapse(&args[0])),
            },
            _ => Check {
                macro_name: name.into(),
                condition: collapse(&args[0]),
                template: template_of(&args[1..]),
            },
        };
        out.push(check);
    }
    out
}
