//! Text wrapped to the page width the way a person reads diagnostics: a code span
//! (`` `…` ``) or a bracketed group (`[0, 5)`) is one word and never split.
//! `python/assertscope/_render.py` wraps alike.

/// Words of `text` in lines of at most `width` characters (a longer word alone on its
/// line); paragraphs (separated by a blank line) start on a new line. A code span (`` `…` ``)
/// or a bracketed group (`[0, 5)`) is one word: it is never split.
pub fn wrap(text: &str, width: usize) -> String {
    let mut lines = Vec::new();
    for paragraph in text.split("\n\n").map(str::trim).filter(|p| !p.is_empty()) {
        lines.extend(fill(paragraph, width));
    }
    lines.join("\n")
}

/// Each line of `text` wrapped on its own (a line break in the text stays one).
pub fn wrap_lines(text: &str, width: usize) -> Vec<String> {
    text.split('\n')
        .flat_map(|part| {
            let lines = fill(part, width);
            if lines.is_empty() {
                vec![String::new()]
            } else {
                lines
            }
        })
        .collect()
}

fn fill(paragraph: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in words(paragraph) {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// `text` split at blanks, outside code spans and square brackets; blanks inside them
/// become one space each. A backtick or bracket that is never closed is a plain character.
/// `_render.words` splits alike.
pub fn words(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut word = String::new();
    let mut i = 0;
    while i < chars.len() {
        let ch = chars[i];
        if ch.is_whitespace() {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            i += 1;
            continue;
        }
        match group_end(&chars, i) {
            Some(end) => {
                let group: String = chars[i..end].iter().collect();
                word.push_str(&group.split_whitespace().collect::<Vec<_>>().join(" "));
                i = end;
            }
            None => {
                word.push(ch);
                i += 1;
            }
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// The end of the code span or bracketed group that opens at `i`, or None.
fn group_end(chars: &[char], i: usize) -> Option<usize> {
    let run_at = |at: usize| chars[at..].iter().take_while(|&&c| c == '`').count();
    match chars[i] {
        '`' => {
            let run = run_at(i);
            let mut at = i + run;
            while at < chars.len() {
                if chars[at] == '`' {
                    let here = run_at(at);
                    if here == run {
                        return Some(at + run);
                    }
                    at += here;
                } else {
                    at += 1;
                }
            }
            None
        }
        '[' => {
            let mut depth = 0usize;
            for (j, &c) in chars.iter().enumerate().skip(i) {
                match c {
                    '[' => depth += 1,
                    ']' => depth -= 1,
                    _ => {}
                }
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            None
        }
        _ => None,
    }
}
