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
