//! Undoing what copying a log into a forum, a chat or a notebook does to it: HTML
//! entities, curly quotes, markdown (links, bold, block quotes, code fences), logger and
//! pytest prefixes, and a progress bar that did not end its line before the error.
//!
//! Each repair is a no-op on clean output, so a clean log parses exactly as before.

use regex::Regex;
use std::borrow::Cow;
use std::sync::OnceLock;

struct Patterns {
    markdown_link: Regex,
    progress_bar: Regex,
    logger_level: Regex,
    loguru: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        // `[text](https://…)`, `[text](vscode-notebook-cell:…)`, `[text](file:///…)`, Colab's `[text](#)`.
        markdown_link: Regex::new(r"\[([^\]\[]+)\]\((?:[a-zA-Z][\w+.-]*:[^)\s]*|#[^)\s]*)\)").unwrap(),
        // tqdm: `45%|████▌     | 450/1000 [00:12<00:15, 36.1it/s, loss=0.7]`, with its description.
        progress_bar: Regex::new(r"^.*?\d+%\|[^|]*\|\s*[\d.]+[kMG]?/[\d.?]+[kMG]?\s*\[[^\]]*\]\s*").unwrap(),
        // Python logging: `[ERROR] …`, `ERROR:root:…`, `ERROR - …`.
        logger_level: Regex::new(
            r"^(?:\[(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\] ?|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]*:|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) - )",
        )
        .unwrap(),
        // loguru: `| ERROR    | module:function:42 - `.
        loguru: Regex::new(r"^\|\s*(?:TRACE|DEBUG|INFO|SUCCESS|WARNING|ERROR|CRITICAL)\s*\|\s*\S+ - ").unwrap(),
    })
}

/// The line as the program printed it, as far as that can be recovered.
pub fn repair(line: &str) -> Cow<'_, str> {
    let mut text = Cow::Borrowed(line);
    if text.contains('&') {
        text = replace(text, unescape_html);
    }
    if !text.is_ascii() {
        text = replace(text, straighten_quotes);
    }
    if text.contains("](") {
        text = replace(text, |s| patterns().markdown_link.replace_all(s, "$1").into_owned());
    }
    if text.contains("%|") {
        text = replace(text, |s| patterns().progress_bar.replace(s, "").into_owned());
    }
    text = strip_markup(text);
    text
}

fn replace<'a>(text: Cow<'a, str>, f: impl Fn(&str) -> String) -> Cow<'a, str> {
    let new = f(&text);
    if new == *text {
        text
    } else {
        Cow::Owned(new)
    }
}

/// Markdown around a pasted line, and the prefixes loggers and pytest put before it.
fn strip_markup(text: Cow<'_, str>) -> Cow<'_, str> {
    let trimmed = text.trim_start();
    let indent = text.len() - trimmed.len();
    let mut body = trimmed;
    // A code fence opens or closes a pasted block: it is not part of the log.
    if body.starts_with("```") || body.starts_with("~~~") {
        return Cow::Borrowed("");
    }
    // A line inside rich's panels (rich.traceback, its locals): the borders and tree
    // guides around the text are drawing, not output.
    if body.starts_with('\u{2502}') {
        body = body.trim_start_matches(['\u{2502}', ' ']).trim_end_matches(['\u{2502}', ' ']);
    }
    // rich writes a value whose repr raised as `<repr-error 'MESSAGE'>`: the message.
    if let Some((_, inner)) = body.split_once("<repr-error '") {
        body = inner.trim_end_matches([',', '>', '\'']);
    }
    // Block quote (and loguru's `> File` marker of the raising frame).
    if let Some(rest) = body.strip_prefix("> ").or_else(|| (body == ">").then_some("")) {
        body = rest;
    }
    // pytest's `E   RuntimeError: …` lines.
    if let Some(rest) = body.strip_prefix('E') {
        if rest.starts_with("  ") {
            body = rest.trim_start();
        }
    }
    let p = patterns();
    if let Some(m) = p.logger_level.find(body).or_else(|| p.loguru.find(body)) {
        body = &body[m.end()..];
    }
    let mut body = body.trim_end_matches(['\u{a0}']);
    if let Some(inner) = body.strip_prefix("**").and_then(|b| b.strip_suffix("**")) {
        body = inner;
    } else if let Some(inner) = body.strip_prefix("**") {
        body = inner;
    }
    // A message quoted as a whole (`"RuntimeError: …"`): the quotes are the writer's.
    if let Some(inner) = quoted_exception(body) {
        body = inner;
    }
    // An inline-code span around a whole line, or one half of it at either end.
    if body.bytes().filter(|&b| b == b'`').count() % 2 == 1 {
        if let Some(inner) = body.strip_prefix('`') {
            body = inner;
        } else if let Some(inner) = body.strip_suffix('`') {
            body = inner;
        }
    } else if body.len() > 1
        && body.starts_with('`')
        && body.ends_with('`')
        && !body[1..body.len() - 1].contains('`')
    {
        body = &body[1..body.len() - 1];
    }
    if body.len() == trimmed.len() {
        return text;
    }
    Cow::Owned(format!("{}{}", &text[..indent], body))
}

/// The inside of a line that is one quoted exception line: `"ValueError: …"`, `'…'`.
fn quoted_exception(body: &str) -> Option<&str> {
    let quote = body.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let inner = body[1..].trim_end_matches(['.', ',']).strip_suffix(quote)?;
    let (name, _) = inner.split_once(": ")?;
    let name = name.rsplit('.').next().unwrap_or(name);
    let is_exception = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && (name.ends_with("Error") || name.ends_with("Exception"));
    (is_exception && !inner.contains(quote)).then_some(inner)
}

fn unescape_html(s: &str) -> String {
    if !s.contains(';') {
        return s.to_string();
    }
    s.replace("&quot;", "\"")
        .replace("&#34;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", " ")
        .replace("&#96;", "`")
        .replace("&amp;", "&")
}

/// Curly quotes as straight ones, and the full-width forms of ASCII that an East Asian
/// input method or a browser's page translation writes (`IndexKernel.cu：92： operator（）`)
/// as the ASCII the program printed.
fn straighten_quotes(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{2033}' => '"',
            '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{2032}' => '\'',
            '\u{a0}' | '\u{3000}' => ' ',
            '\u{ff01}'..='\u{ff5e}' => char::from_u32(c as u32 - 0xff01 + 0x21).unwrap_or(c),
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_lines_are_unchanged() {
        for line in [
            "  File \"/home/u/train.py\", line 12, in main",
            "RuntimeError: CUDA error: device-side assert triggered",
            "/pytorch/aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [3,0,0] Assertion `t >= 0 && t < n_classes` failed.",
            "---> 12 loss = criterion(out, y)",
            "Error executing job with overrides: []",
        ] {
            assert!(matches!(repair(line), Cow::Borrowed(_)), "{line}");
        }
    }

    #[test]
    fn undoes_forum_damage() {
        assert_eq!(
            repair("  File &quot;/a/b.py&quot;, line 3, in &lt;module&gt;"),
            "  File \"/a/b.py\", line 3, in <module>"
        );
        assert_eq!(
            repair("  File \u{201c}/a/b.py\u{201d}, line 3, in f"),
            "  File \"/a/b.py\", line 3, in f"
        );
        assert_eq!(
            repair("[<ipython-input-33-ce4df85cbc13>](https://localhost:8080/#) in <cell line: 6>()"),
            "<ipython-input-33-ce4df85cbc13> in <cell line: 6>()"
        );
        assert_eq!(
            repair("**RuntimeError: CUDA error: device-side assert triggered**"),
            "RuntimeError: CUDA error: device-side assert triggered"
        );
        assert_eq!(repair("    **loss = f(x)**"), "    loss = f(x)");
        assert_eq!(
            repair("`RuntimeError: x (while checking arguments for embedding)`"),
            "RuntimeError: x (while checking arguments for embedding)"
        );
        assert_eq!(repair("```"), "");
        assert_eq!(repair("> RuntimeError: boom"), "RuntimeError: boom");
        assert_eq!(
            repair("\"IndexError: index 7 is out of bounds for dimension 0 with size 4\""),
            "IndexError: index 7 is out of bounds for dimension 0 with size 4"
        );
        assert_eq!(repair("'ValueError: boom'"), "ValueError: boom");
        assert_eq!(repair("\"a quoted remark\""), "\"a quoted remark\"");
    }

    #[test]
    fn rich_panel_borders_are_drawing() {
        assert_eq!(
            repair("\u{2502} \u{2502}     \u{2502}   <repr-error 'CUDA error: an illegal memory access was    \u{2502} \u{2502}"),
            "CUDA error: an illegal memory access was"
        );
        assert_eq!(repair("<repr-error 'boom'>,"), "boom");
    }

    #[test]
    fn full_width_forms_are_ascii() {
        assert_eq!(
            repair("Kernel.cu\u{ff1a}57\u{ff1a} operator\u{ff08}\u{ff09}\u{ff1a} block\u{ff1a} [1,0,0]\u{ff0c}\u{3000}thread"),
            "Kernel.cu:57: operator(): block: [1,0,0], thread"
        );
    }

    #[test]
    fn strips_logger_pytest_and_progress_prefixes() {
        assert_eq!(repair("[ERROR]    File \"x.py\", line 1, in f"), "   File \"x.py\", line 1, in f");
        assert_eq!(
            repair("E       RuntimeError: CUDA error: device-side assert triggered"),
            "RuntimeError: CUDA error: device-side assert triggered"
        );
        assert_eq!(repair("| ERROR    | __main__:train:42 - RuntimeError: boom"), "RuntimeError: boom");
        assert_eq!(
            repair("Epoch 3:  45%|████▌     | 450/1000 [00:12<00:15, 36.1it/s]RuntimeError: boom"),
            "RuntimeError: boom"
        );
    }
}
