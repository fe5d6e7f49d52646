//! What a raw log line becomes before parsing: text without terminal colours, split at
//! carriage returns (progress bars repaint with `\r`), and without the rank prefix that
//! launchers add.

use std::borrow::Cow;

/// Text with ANSI escape sequences (colours, cursor moves) removed.
pub fn strip_ansi(s: &str) -> Cow<'_, str> {
    if !s.contains('\x1b') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            // CSI: ESC [ params final-byte
            Some('[') => {
                chars.next();
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            // OSC: ESC ] ... BEL or ESC \
            Some(']') => {
                chars.next();
                while let Some(c) = chars.next() {
                    if c == '\x07' || (c == '\x1b' && chars.peek() == Some(&'\\')) {
                        if c == '\x1b' {
                            chars.next();
                        }
                        break;
                    }
                }
            }
            Some(_) => {
                chars.next();
            }
            None => {}
        }
    }
    Cow::Owned(out)
}

/// The rank or task a launcher prefixed a line with, and the line without the prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefixed<'a> {
    pub rank: Option<u32>,
    pub text: &'a str,
}

/// Strips launcher prefixes: torchrun's `[rank3]:` and `[default0]:` (also stacked, as
/// with `--tee`), `srun --label`'s `3: `, Open MPI's `[1,3]<stderr>:`, and pdsh's
/// `worker-3: `; and the timestamp that log collectors (kubectl --timestamps, cloud
/// consoles) put before every line.
pub fn strip_rank_prefix(line: &str) -> Prefixed<'_> {
    let mut rank = None;
    let mut text = strip_timestamp(line);
    loop {
        if let Some((r, rest)) = bracketed_rank(text) {
            rank = rank.or(Some(r));
            text = strip_timestamp(rest);
            continue;
        }
        break;
    }
    if rank.is_none() {
        if let Some((r, rest)) = label_rank(text) {
            return Prefixed { rank: Some(r), text: rest };
        }
    }
    Prefixed { rank, text }
}

/// A leading `2024-01-15T10:23:45.123Z`, `2024-01-15 10:23:45,123` or
/// `[2024-01-15 10:23:45]`, and the blank after it.
fn strip_timestamp(s: &str) -> &str {
    let b = s.as_bytes();
    let bracket = b.first() == Some(&b'[');
    let mut i = bracket as usize;
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let is = |i: usize, c: u8| b.get(i) == Some(&c);
    // YYYY-MM-DD
    if !(digit(i)
        && digit(i + 1)
        && digit(i + 2)
        && digit(i + 3)
        && is(i + 4, b'-')
        && digit(i + 5)
        && digit(i + 6))
        || !(is(i + 7, b'-') && digit(i + 8) && digit(i + 9))
    {
        return s;
    }
    i += 10;
    // [T ]HH:MM:SS
    if !(is(i, b'T') || is(i, b' '))
        || !(digit(i + 1) && digit(i + 2) && is(i + 3, b':') && digit(i + 4) && digit(i + 5))
    {
        return s;
    }
    i += 6;
    if is(i, b':') && digit(i + 1) && digit(i + 2) {
        i += 3;
    }
    if (is(i, b'.') || is(i, b',')) && digit(i + 1) {
        i += 1;
        while digit(i) {
            i += 1;
        }
    }
    if is(i, b'Z') {
        i += 1;
    } else if (is(i, b'+') || is(i, b'-')) && digit(i + 1) && digit(i + 2) {
        i += 3;
        if is(i, b':') {
            i += 1;
        }
        while digit(i) {
            i += 1;
        }
    }
    if bracket {
        if !is(i, b']') {
            return s;
        }
        i += 1;
    }
    if is(i, b' ') || is(i, b'\t') {
        i += 1;
    } else if i < b.len() {
        return s;
    }
    &s[i..]
}

/// `[rank3]:`, `[default3]:`, `[1,3]<stdout>:` at the start of `s`.
fn bracketed_rank(s: &str) -> Option<(u32, &str)> {
    let body_end = s.find("]")?;
    let body = s.strip_prefix('[')?.get(..body_end - 1)?;
    let after = &s[body_end + 1..];
    let rank = if let Some(n) = body.strip_prefix("rank").or_else(|| body.strip_prefix("default")) {
        n.parse().ok()?
    } else if let Some((_, n)) = body.split_once(',') {
        // Open MPI --tag-output: [jobid,rank]<stream>:
        let n: u32 = n.parse().ok()?;
        let after = after.strip_prefix("<stdout>").or_else(|| after.strip_prefix("<stderr>"))?;
        return Some((n, after.strip_prefix(':')?));
    } else {
        return None;
    };
    let rest = after.strip_prefix(':')?;
    Some((rank, rest.strip_prefix(' ').unwrap_or(rest)))
}

/// `3: ` (srun --label, possibly right-aligned) or `worker-3: ` (pdsh, deepspeed).
fn label_rank(s: &str) -> Option<(u32, &str)> {
    let trimmed = s.trim_start_matches(' ');
    let (label, rest) = trimmed.split_once(": ")?;
    let digits = label.strip_prefix("worker-").unwrap_or(label);
    if digits.is_empty() || digits.len() > 5 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Right-aligned labels pad with spaces to the width of the largest task id only.
    if s.len() - trimmed.len() > 3 {
        return None;
    }
    Some((digits.parse().ok()?, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_colours() {
        assert_eq!(strip_ansi("\x1b[0;31mRuntimeError\x1b[0m: x"), "RuntimeError: x");
        assert_eq!(strip_ansi("\x1b[38;5;241m.\x1b[39m"), ".");
        assert_eq!(strip_ansi("plain"), "plain");
    }

    #[test]
    fn strips_launcher_prefixes() {
        let p = strip_rank_prefix("[rank3]:   File \"train.py\", line 3, in <module>");
        assert_eq!((p.rank, p.text), (Some(3), "  File \"train.py\", line 3, in <module>"));
        let p = strip_rank_prefix("[default1]:[rank1]: Traceback (most recent call last):");
        assert_eq!((p.rank, p.text), (Some(1), "Traceback (most recent call last):"));
        let p = strip_rank_prefix("[rank1]:[E1105 09:41:07.295 ProcessGroupNCCL.cpp:607] x");
        assert_eq!((p.rank, p.text), (Some(1), "[E1105 09:41:07.295 ProcessGroupNCCL.cpp:607] x"));
        let p = strip_rank_prefix("3:   File \"main.py\", line 1, in <module>");
        assert_eq!((p.rank, p.text), (Some(3), "  File \"main.py\", line 1, in <module>"));
        let p = strip_rank_prefix(" 12: Traceback (most recent call last):");
        assert_eq!((p.rank, p.text), (Some(12), "Traceback (most recent call last):"));
        let p = strip_rank_prefix("[1,2]<stderr>:RuntimeError: boom");
        assert_eq!((p.rank, p.text), (Some(2), "RuntimeError: boom"));
        let p = strip_rank_prefix("worker-0: Traceback (most recent call last):");
        assert_eq!((p.rank, p.text), (Some(0), "Traceback (most recent call last):"));
    }

    #[test]
    fn strips_collector_timestamps() {
        let p = strip_rank_prefix("2024-01-15T10:23:45.123456789Z   File \"train.py\", line 3, in <module>");
        assert_eq!(p.text, "  File \"train.py\", line 3, in <module>");
        let p =
            strip_rank_prefix("[2024-01-15 10:23:45] RuntimeError: CUDA error: device-side assert triggered");
        assert_eq!(p.text, "RuntimeError: CUDA error: device-side assert triggered");
        let p = strip_rank_prefix("2024-01-15 10:23:45,123 [rank2]: Traceback (most recent call last):");
        assert_eq!((p.rank, p.text), (Some(2), "Traceback (most recent call last):"));
        let p = strip_rank_prefix("[rank2]:2024-01-15T10:23:45+00:00 IndexError: x");
        assert_eq!((p.rank, p.text), (Some(2), "IndexError: x"));
        assert_eq!(strip_rank_prefix("2024-01-15 was a good day").text, "2024-01-15 was a good day");
    }

    #[test]
    fn leaves_ordinary_lines_alone() {
        for line in ["[rank 0] step 5 loss 2.0", "    10: not a label", "RuntimeError: 3: x", "[W1105 x] y"] {
            assert_eq!(strip_rank_prefix(line).rank, None, "{line}");
        }
    }
}
