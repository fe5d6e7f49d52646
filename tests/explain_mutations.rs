//! Paste damage, applied to every labelled development log: the answer (root cause and
//! user frame) must survive the ways real users mangle a log when they copy it out of a
//! terminal, a notebook or a forum. Prints, per mutation, how many logs keep their cause
//! and frame (`cargo test --test explain_mutations -- --nocapture`).

use assertscope::diagnose;
use assertscope::log;
use std::path::Path;

struct Expected {
    id: String,
    cause: String,
    user_frame: String,
}

fn devset() -> Vec<Expected> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/devset");
    let index = std::fs::read_to_string(dir.join("index.tsv")).unwrap();
    index
        .lines()
        .skip(1)
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            Expected { id: cols[0].into(), cause: cols[1].into(), user_frame: cols[3].into() }
        })
        .collect()
}

/// The root cause and user frame (`file:line`, `-` for none) that explain gives.
fn answer(text: &[u8]) -> (String, String) {
    let scan = log::scan(text, "pasted.log", None).unwrap();
    let report = diagnose::diagnose(&[scan]);
    let Some(root) = report.diagnoses.first() else { return ("none".into(), "-".into()) };
    let frame = match &root.location {
        None => "-".to_string(),
        Some(l) => format!("{}:{}", l.file, l.line.map_or("null".to_string(), |n| n.to_string())),
    };
    (root.cause.clone(), frame)
}

type Mutation = fn(&str) -> String;

const PROGRESS_BAR: &str = "Epoch 3:  45%|████▌     | 450/1000 [00:12<00:15, 36.1it/s, loss=0.693]";

fn lines_map(text: &str, f: impl Fn(&str) -> String) -> String {
    let mut out: Vec<String> = text.split('\n').map(f).collect();
    if text.ends_with('\n') {
        out.pop();
        out.push(String::new());
    }
    out.join("\n")
}

fn strip_indentation(text: &str) -> String {
    lines_map(text, |l| l.trim_start().to_string())
}

/// A terminal's hard wrap: every line longer than `width` characters is broken at exactly
/// `width`, whatever is there.
fn wrap(text: &str, width: usize) -> String {
    lines_map(text, |l| {
        let chars: Vec<char> = l.chars().collect();
        chars.chunks(width).map(|c| c.iter().collect::<String>()).collect::<Vec<_>>().join("\n")
    })
}

fn wrap_80(text: &str) -> String {
    wrap(text, 80)
}

fn wrap_120(text: &str) -> String {
    wrap(text, 120)
}

/// The paste stops two thirds into the last non-blank line, inside a word.
fn cut_last_line(text: &str) -> String {
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
fn glue_progress_bar(text: &str) -> String {
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
fn notebook_links(text: &str) -> String {
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

fn rank_prefixes(text: &str) -> String {
    lines_map(text, |l| if l.is_empty() { l.to_string() } else { format!("[rank0]: {l}") })
}

fn crlf(text: &str) -> String {
    text.replace('\n', "\r\n")
}

fn curly_quotes(text: &str) -> String {
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

fn drop_traceback_header(text: &str) -> String {
    text.split('\n')
        .filter(|l| !l.contains("Traceback (most recent call last)"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

const MUTATIONS: &[(&str, Mutation)] = &[
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

#[test]
fn paste_damage_keeps_cause_and_frame() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/devset");
    let logs: Vec<(Expected, String)> = devset()
        .into_iter()
        .map(|e| {
            let bytes = std::fs::read(dir.join(format!("{}.log", e.id))).unwrap();
            (e, String::from_utf8_lossy(&bytes).into_owned())
        })
        .collect();
    let (mut pairs, mut causes, mut frames) = (0, 0, 0);
    let mut misses = Vec::new();
    println!("{:<26} {:>8} {:>8}", "mutation", "cause", "frame");
    for (name, mutate) in MUTATIONS {
        let (mut cause_ok, mut frame_ok) = (0, 0);
        for (expected, text) in &logs {
            let (cause, frame) = answer(mutate(text).as_bytes());
            let c = cause == expected.cause;
            let f = frame == expected.user_frame;
            cause_ok += c as usize;
            frame_ok += f as usize;
            if !c || !f {
                misses.push(format!(
                    "{name} / {}: got {cause} {frame}, want {} {}",
                    expected.id, expected.cause, expected.user_frame
                ));
            }
        }
        println!("{name:<26} {cause_ok:>5}/{} {frame_ok:>5}/{}", logs.len(), logs.len());
        pairs += logs.len();
        causes += cause_ok;
        frames += frame_ok;
    }
    let cause_rate = causes as f64 / pairs as f64;
    let frame_rate = frames as f64 / pairs as f64;
    println!("{:<26} {:>7.1}% {:>7.1}%", "all", cause_rate * 100.0, frame_rate * 100.0);
    for m in &misses {
        println!("miss: {m}");
    }
    assert!(cause_rate >= 0.97, "cause kept in {:.1}% of (log, mutation) pairs", cause_rate * 100.0);
    assert!(frame_rate >= 0.95, "frame kept in {:.1}% of (log, mutation) pairs", frame_rate * 100.0);
}

#[test]
fn mutations_change_the_text() {
    // A mutation that leaves a log unchanged would inflate the suite's score.
    let sample = "Traceback (most recent call last):\n  File \"/home/u/train.py\", line 12, in main\n    loss = criterion(out, y) & 'x' <tag> and a long line that goes on past eighty columns and then past one hundred and twenty columns of text, to be wrapped twice over\nRuntimeError: CUDA error: device-side assert triggered\n";
    for (name, mutate) in MUTATIONS {
        assert_ne!(mutate(sample), sample, "{name}");
    }
}
