//! Matching a message that a paste damaged: cut off mid-word, without its full stop,
//! words glued together where a line break was lost, typed again from a screenshot in
//! another case or spacing, or quoted in backticks and quotes of a forum's own. Only the stable part of each
//! message is compared, so a tolerant match carries no values, and it is weaker evidence
//! than an exact one.

/// A literal shorter than this is too generic to be recognised without its pattern.
const DISTINCTIVE_LITERAL: usize = 20;
/// A cut-off text must keep at least this many words of a message (after the type).
const MIN_WORDS_KEPT: usize = 3;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    Number,
    Punct(char),
}

fn tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_alphanumeric() || c == '_' {
            let mut word = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_alphanumeric() || c == '_' {
                    word.push(c);
                    chars.next();
                } else {
                    break;
                }
            }
            if word.bytes().all(|b| b.is_ascii_digit()) {
                out.push(Token::Number);
            } else {
                out.push(Token::Word(word.to_lowercase()));
            }
        } else if is_quoting(c) {
            // Quotes and backticks are the paste's, or the message's own; either way they
            // do not tell two messages apart.
            chars.next();
        } else {
            out.push(Token::Punct(c));
            chars.next();
        }
    }
    out
}

/// The message without a leading `SomeError: ` (so that texts with and without their
/// type compare alike).
fn without_type(text: &str) -> &str {
    let t = text.trim();
    match t.split_once(": ") {
        Some((head, rest))
            if !head.contains(' ') && {
                let head = head.to_ascii_lowercase();
                head.ends_with("error") || head.ends_with("exception")
            } =>
        {
            rest
        }
        _ => t,
    }
}

/// The text's message as tokens, each compared with what the example says at that place.
pub struct Examples {
    examples: Vec<Vec<Token>>,
    squeezed_literals: Vec<Option<String>>,
}

/// The text as compared: no blanks, quotes or emphasis, one case.
fn squeeze(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace() && !is_quoting(*c)).flat_map(char::to_lowercase).collect()
}

fn is_quoting(c: char) -> bool {
    matches!(c, '`' | '\'' | '"' | '*' | '\u{2018}' | '\u{2019}' | '\u{201c}' | '\u{201d}')
}

impl Examples {
    /// `entries`: (literal, example) per knowledge-base entry, in its order.
    pub fn new<'a>(entries: impl Iterator<Item = (&'a str, &'a str)>) -> Examples {
        let (examples, squeezed_literals) = entries
            .map(|(literal, example)| {
                let squeezed = (literal.len() >= DISTINCTIVE_LITERAL).then(|| squeeze(literal));
                (tokens(without_type(example)), squeezed)
            })
            .unzip();
        Examples { examples, squeezed_literals }
    }

    /// The entry whose distinctive literal the text holds, whatever its case, spacing and
    /// quoting.
    pub fn find_literal(&self, text: &str) -> Option<usize> {
        let squeezed = squeeze(text);
        self.squeezed_literals.iter().position(|l| l.as_ref().is_some_and(|l| squeezed.contains(l.as_str())))
    }

    /// The entry a damaged text belongs to: its literal with spaces lost or added, or its
    /// example cut off (the text is a word-for-word prefix of the example, numbers
    /// standing for numbers, the last word possibly cut).
    pub fn find(&self, text: &str) -> Option<usize> {
        if let Some(i) = self.find_literal(text) {
            return Some(i);
        }
        let cut = tokens(without_type(text));
        let mut best: Option<(usize, usize)> = None;
        for (i, example) in self.examples.iter().enumerate() {
            if let Some(words) = cut_prefix_words(&cut, example) {
                if words >= MIN_WORDS_KEPT && best.is_none_or(|(_, w)| words > w) {
                    best = Some((i, words));
                }
            }
        }
        best.map(|(i, _)| i)
    }
}

/// When `cut` is `example` cut short, the number of words it kept.
fn cut_prefix_words(cut: &[Token], example: &[Token]) -> Option<usize> {
    if cut.is_empty() || cut.len() > example.len() {
        return None;
    }
    // A complete text is an exact-match question, not a tolerant one.
    let mut words = 0;
    for (i, (t, e)) in cut.iter().zip(example).enumerate() {
        let last = i + 1 == cut.len();
        let same = match (t, e) {
            (Token::Word(a), Token::Word(b)) => a == b || (last && b.starts_with(a.as_str())),
            (Token::Number, Token::Number) => true,
            // A number cut to its first digits is still a number.
            (Token::Punct(a), Token::Punct(b)) => a == b,
            _ => false,
        };
        if !same {
            return None;
        }
        words += matches!(t, Token::Word(_)) as usize;
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn examples() -> Examples {
        Examples::new(
            [
                ("is out of bounds.", "IndexError: Target 10 is out of bounds."),
                ("device-side assert triggered", "RuntimeError: CUDA error: device-side assert triggered"),
                ("for target with class probabilities", "RuntimeError: Expected floating point type for target with class probabilities, got Long"),
            ]
            .into_iter(),
        )
    }

    #[test]
    fn a_message_cut_mid_word_is_recognised() {
        let e = examples();
        assert_eq!(e.find("IndexError: Target 3 is out of bou"), Some(0));
        assert_eq!(e.find("IndexError: Target 3 is out"), Some(0));
        assert_eq!(e.find("RuntimeError: CUDA error: device-side ass"), Some(1));
        assert_eq!(e.find("Expected floating point type for tar"), Some(2));
    }

    #[test]
    fn lost_spaces_and_glued_words_are_recognised() {
        let e = examples();
        assert_eq!(
            e.find("RuntimeError: CUDA error: device-side asserttriggeredCUDA kernel errors"),
            Some(1)
        );
        assert_eq!(
            e.find("Expected floating point type fortarget with class probabilities, got Long"),
            Some(2)
        );
    }

    #[test]
    fn case_spacing_and_quoting_do_not_matter() {
        let e = examples();
        assert_eq!(e.find("runtimeerror: cuda error: DEVICE-SIDE ASSERT TRIGGERED"), Some(1));
        assert_eq!(e.find("indexerror: target 3 is out of bounds"), Some(0));
        assert_eq!(
            e.find("`Expected floating point type for target with class probabilities, got Long`"),
            Some(2)
        );
        assert_eq!(e.find("Expected  floating point type  for `target` with class probabilities"), Some(2));
    }

    #[test]
    fn too_little_or_something_else_is_not() {
        let e = examples();
        assert_eq!(e.find("IndexError: Target"), None);
        assert_eq!(e.find("RuntimeError: CUDA error: out of memory"), None);
        assert_eq!(e.find("Target 3 is in bounds"), None);
    }
}
