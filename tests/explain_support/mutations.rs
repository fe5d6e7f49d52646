//! The paste damage real users cause to a log, as functions from text to text: shared by
//! the mutation suite and the mapped-reader equivalence test.

pub type Mutation = fn(&str) -> String;

pub const PROGRESS_BAR: &str = "Epoch 3:  45%|████▌     | 450/1000 [00:12<00:15, 36.1it/s, loss=0.693]";

pub fn lines_map(text: &str, f: impl Fn(&str) -> String) -> String {
    let mut out: Vec<String> = text.split('\n').map(f).collect();
    if text.ends_with('\n') {
        out.pop();
        out.push(String::new());
    }
    out.join("\n")
}

pub fn strip_indentation(text: &str) -> String {
    lines_map(text, |l| l.trim_start().to_string())
}

/// A terminal's hard wrap: every line longer than `width` characters is broken at exactly
/// `width`, whatever is there.
pub fn wrap(text: &str, width: usize) -> String {
    lines_map(text, |l| {
        let chars: Vec<char> = l.chars().collect();
        chars.chunks(width).map(|c| c.iter().collect::<String>()).collect::<Vec<_>>().join("\n")
    })
}

pub fn wrap_80(text: &str) -> String {
    wrap(text, 80)
}

pub fn wrap_120(text: &str) -> String {
    wrap(text, 120)
}

/// The paste stops two thirds into the last non-blank line, inside a word.
pub fn cut_last_line(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    let Some(last) = lines.pop() else { return String::new() };
    let chars: Vec<char> = last.chars().collect();
    let mut cut = chars.len() * 2 / 3;
    while cut > 1 && !(chars[cut - 1].is_alphanumeric() && chars[cut].is_alphanumeric()) {
        cut -= 1;
    }
    let kept: String = chars[..cut.max(1)].iter().collect();
    let mut out = lines.join("\n");
    out.push('\n');
    out.push_str(&kept);
    out
}

/// A progress bar that did not end its line, glued before the line that matters most.
pub fn glue_progress_bar(text: &str) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let target = lines
        .iter()
        .position(|l| l.contains("Assertion `"))
        .or_else(|| lines.iter().position(|l| l.contains("Traceback (most recent call last)")))
        .or_else(|| lines.iter().rposition(|l| l.contains("Error: ")));
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| if Some(i) == target { format!("{PROGRESS_BAR}{l}") } else { l.to_string() })
        .collect::<Vec<_>>()
        .join("\n")
}

/// File names turned into links, as VS Code, Colab and Databricks copy them.
pub fn notebook_links(text: &str) -> String {
    lines_map(text, |l| {
        let t = l.trim_start();
        let Some(rest) = t.strip_prefix("File \"") else { return l.to_string() };
        let Some((file, rest)) = rest.split_once("\", line ") else { return l.to_string() };
        let (line, func) = match rest.split_once(", in ") {
            Some((n, f)) => (n, Some(f)),
            None => (rest, None),
        };
        let indent = &l[..l.len() - t.len()];
        let mut out = format!("{indent}File [{file}:{line}](vscode-notebook-cell:{file}#L{line})");
        if let Some(f) = func {
            out.push_str(", in ");
            out.push_str(f);
        }
        out
    })
}

pub fn rank_prefixes(text: &str) -> String {
    lines_map(text, |l| if l.is_empty() { l.to_string() } else { format!("[rank0]: {l}") })
}

pub fn crlf(text: &str) -> String {
    text.replace('\n', "\r\n")
}

pub fn curly_quotes(text: &str) -> String {
    lines_map(text, |l| {
        let mut open = true;
        l.chars()
            .map(|c| match c {
                '"' => {
                    open = !open;
                    if open {
                        '\u{201d}'
                    } else {
                        '\u{201c}'
                    }
                }
                '\'' => '\u{2019}',
                c => c,
            })
            .collect()
    })
}

pub fn drop_traceback_header(text: &str) -> String {
    text.split('\n')
        .filter(|l| !l.contains("Traceback (most recent call last)"))
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

pub const MUTATIONS: &[(&str, Mutation)] = &[
    ("strip indentation", strip_indentation),
    ("wrap at 80 columns", wrap_80),
    ("wrap at 120 columns", wrap_120),
    ("cut last line mid-word", cut_last_line),
    ("progress bar glued", glue_progress_bar),
    ("notebook links", notebook_links),
    ("rank prefixes", rank_prefixes),
    ("CRLF line ends", crlf),
    ("curly quotes", curly_quotes),
    ("no Traceback header", drop_traceback_header),
    ("HTML-escaped", html_escape),
];

/// What a person does to a log by hand: retypes it from a screenshot (case and spacing
/// change), quotes it in a forum post (backticks, `>` prefixes, a sentence around it, a
/// debugger session after it) or cuts it short before the message line. Each leaves the text
/// unchanged where it does not apply (no message line to quote, no traceback to cut).
pub const HAND_EDITS: &[(&str, Mutation)] = &[
    ("messages in lower case", lower_case_messages),
    ("messages in Title Case", title_case_messages),
    ("runs of spaces collapsed", collapse_space_runs),
    ("no spaces around operators", drop_spaces_around_operators),
    ("spaces doubled", double_spaces),
    ("no space after , and :", drop_spaces_after_punctuation),
    ("line break inside message", break_message_line),
    ("message in backticks", message_in_backticks),
    ("backticks, then pdb", backticks_then_debugger),
    ("'> ' quote prefixes", quote_prefixes),
    ("message in a sentence", message_in_sentence),
    ("cut before the message", cut_before_message),
];

/// A traceback's frame header (`File "…", line N`, IPython's `Cell In[…]` and
/// `<ipython-input-…>`): kept as typed, since its path is case- and space-sensitive.
fn is_frame_header(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("File ")
        || t.starts_with("Cell In[")
        || t.contains("<ipython-input-")
        || t.contains("\", line ")
}

/// Where an exception's message starts in `line`: the name ending in `Error` or `Exception`
/// before its `:` (`RuntimeError: …`, `torch.cuda.OutOfMemoryError: …`, after a `[rank0]: `).
fn message_start(line: &str) -> Option<usize> {
    if is_frame_header(line) {
        return None;
    }
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    for suffix in ["Error:", "Exception:"] {
        let mut from = 0;
        while let Some(at) = line[from..].find(suffix).map(|i| i + from) {
            let start = line[..at]
                .char_indices()
                .rev()
                .find(|&(_, c)| !is_name(c))
                .map_or(0, |(i, c)| i + c.len_utf8());
            if start < at || at == 0 {
                return Some(start);
            }
            from = at + suffix.len();
        }
    }
    None
}

/// The line that holds the message a person would quote: the last exception line, else the
/// first assertion line. Returns its index and where the message starts in it.
fn message_line(lines: &[&str]) -> Option<(usize, usize)> {
    let exception = lines.iter().enumerate().rev().find_map(|(i, l)| message_start(l).map(|s| (i, s)));
    exception.or_else(|| {
        let i = lines.iter().position(|l| l.contains("Assertion `") || l.contains("Assertion failed"))?;
        Some((i, lines[i].len() - lines[i].trim_start().len()))
    })
}

/// `text` with its message line replaced by what `edit` makes of (the text before the
/// message, the message); unchanged when it has no message line.
fn edit_message(text: &str, edit: impl Fn(&str, &str) -> String) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let Some((i, start)) = message_line(&lines) else { return text.to_string() };
    let line = lines[i].trim_end_matches('\r');
    let line_end = &lines[i][line.len()..];
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    out[i] = format!("{}{line_end}", edit(&line[..start], &line[start..]));
    out.join("\n")
}

fn map_unless_frame(text: &str, f: impl Fn(&str) -> String) -> String {
    lines_map(text, |l| if is_frame_header(l) { l.to_string() } else { f(l) })
}

pub fn lower_case_messages(text: &str) -> String {
    map_unless_frame(text, |l| l.to_lowercase())
}

/// Every word's first letter in upper case, as a screenshot retyped in a title.
pub fn title_case_messages(text: &str) -> String {
    map_unless_frame(text, |l| {
        let mut after_space = true;
        l.chars()
            .map(|c| {
                let out = if after_space { c.to_ascii_uppercase() } else { c };
                after_space = c == ' ';
                out
            })
            .collect()
    })
}

/// Leading indentation kept, every other run of spaces one space: HTML's rendering.
pub fn collapse_space_runs(text: &str) -> String {
    lines_map(text, |l| {
        let body = l.trim_start_matches(' ');
        let mut out = l[..l.len() - body.len()].to_string();
        let mut previous_space = false;
        for c in body.chars() {
            if !(c == ' ' && previous_space) {
                out.push(c);
            }
            previous_space = c == ' ';
        }
        out
    })
}

/// `t >= 0 && t < n_classes` typed as `t>=0&&t<n_classes`.
pub fn drop_spaces_around_operators(text: &str) -> String {
    let mut out = text.to_string();
    for op in [">=", "<=", "==", "!=", "&&", "||", "<", ">"] {
        out = out.replace(&format!(" {op} "), op);
    }
    out
}

/// Every space after the indentation doubled, frame headers aside.
pub fn double_spaces(text: &str) -> String {
    map_unless_frame(text, |l| {
        let body = l.trim_start_matches(' ');
        format!("{}{}", &l[..l.len() - body.len()], body.replace(' ', "  "))
    })
}

/// `line 550, in __call__` typed as `line 550,in __call__`; `Error: x` as `Error:x`.
pub fn drop_spaces_after_punctuation(text: &str) -> String {
    map_unless_frame(text, |l| {
        let body = l.trim_start_matches(' ');
        format!("{}{}", &l[..l.len() - body.len()], body.replace(", ", ",").replace(": ", ":"))
    })
}

/// The message broken in two at its middle space, as a narrow window wraps it.
pub fn break_message_line(text: &str) -> String {
    edit_message(text, |before, message| {
        let mut middle = message.len() / 2;
        while !message.is_char_boundary(middle) {
            middle -= 1;
        }
        let split = message[..middle].rfind(' ').or_else(|| message[middle..].find(' ').map(|i| i + middle));
        match split {
            Some(at) => format!("{before}{} \n{}", &message[..at], &message[at + 1..]),
            None => format!("{before}{message}"),
        }
    })
}

pub fn message_in_backticks(text: &str) -> String {
    edit_message(text, |before, message| format!("{before}`{message}`"))
}

/// The message glued into backticks, then the post-mortem session the user ran after it.
pub fn backticks_then_debugger(text: &str) -> String {
    edit_message(text, |before, message| {
        format!(
            "{before}`{message}`\n(Pdb) p target.min(), target.max()\n(tensor(0, device='cuda:0'), tensor(10, device='cuda:0'))\n(Pdb) p logits.shape\ntorch.Size([32, 10])\n(Pdb) q"
        )
    })
}

/// Every line quoted with markdown's `> `.
pub fn quote_prefixes(text: &str) -> String {
    lines_map(text, |l| format!("> {l}"))
}

pub fn message_in_sentence(text: &str) -> String {
    edit_message(text, |before, message| {
        format!("{before}When I train I get \"{message}\" after a few batches, any idea why?")
    })
}

/// The traceback cut just before its message line: the frames, innermost last, remain.
/// Unchanged when no message line follows a frame.
pub fn cut_before_message(text: &str) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let Some(last_frame) = lines.iter().rposition(|l| is_frame_header(l)) else { return text.to_string() };
    let Some(offset) = lines[last_frame..].iter().position(|l| message_start(l).is_some()) else {
        return text.to_string();
    };
    let mut out = lines[..last_frame + offset].join("\n");
    out.push('\n');
    out
}
