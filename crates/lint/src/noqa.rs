//! `# noqa` comments: `# noqa` alone silences every finding on its line, `# noqa: AS101,
//! AS105` only those codes. Read from comment tokens, so `# noqa` inside a string is text.

use super::source::SourceFile;
use ruff_python_ast::token::TokenKind;
use ruff_text_size::Ranged;
use std::collections::HashMap;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Directive {
    All,
    Codes(Vec<String>),
}

#[derive(Debug, Default)]
pub struct Directives {
    by_line: HashMap<usize, Directive>,
}

impl Directives {
    pub fn from_source(file: &SourceFile<'_>) -> Directives {
        let mut by_line = HashMap::new();
        for token in file.parsed().tokens() {
            if token.kind() != TokenKind::Comment {
                continue;
            }
            if let Some(directive) = parse_comment(&file.text()[token.range()]) {
                by_line.insert(file.line_of(token.start()), directive);
            }
        }
        Directives { by_line }
    }

    pub fn suppresses(&self, line: usize, code: &str) -> bool {
        match self.by_line.get(&line) {
            Some(Directive::All) => true,
            Some(Directive::Codes(codes)) => codes.iter().any(|c| c.eq_ignore_ascii_case(code)),
            None => false,
        }
    }
}

/// Parses one comment (`# noqa`, `# noqa: AS101, AS102`, `# type: int  # noqa:AS101`).
pub fn parse_comment(comment: &str) -> Option<Directive> {
    let lower = comment.to_ascii_lowercase();
    let mut search = 0;
    while let Some(found) = lower[search..].find("noqa") {
        let at = search + found;
        search = at + 4;
        let before = lower[..at].trim_end();
        if !before.ends_with('#') {
            continue;
        }
        let rest = &comment[at + 4..];
        let Some(list) = rest.strip_prefix(':').or_else(|| rest.trim_start().strip_prefix(':')) else {
            // `# noqa` followed by nothing that names codes.
            if rest.chars().next().is_none_or(|c| !c.is_alphanumeric()) {
                return Some(Directive::All);
            }
            continue;
        };
        let codes: Vec<String> = list
            .split(|c: char| c == ',' || c.is_whitespace())
            .map(str::trim)
            .take_while(|c| c.is_empty() || is_code(c))
            .filter(|c| !c.is_empty())
            .map(str::to_string)
            .collect();
        return Some(if codes.is_empty() { Directive::All } else { Directive::Codes(codes) });
    }
    None
}

/// A rule code: letters then digits (`AS101`, `E501`).
fn is_code(word: &str) -> bool {
    let digits = word.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    digits.len() < word.len() && !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_people_write() {
        assert_eq!(parse_comment("# noqa"), Some(Directive::All));
        assert_eq!(parse_comment("#noqa"), Some(Directive::All));
        assert_eq!(parse_comment("# NOQA: AS101"), Some(Directive::Codes(vec!["AS101".into()])));
        assert_eq!(
            parse_comment("# noqa:AS101,AS105 -- padded later"),
            Some(Directive::Codes(vec!["AS101".into(), "AS105".into()]))
        );
        assert_eq!(
            parse_comment("# type: ignore  # noqa: E501"),
            Some(Directive::Codes(vec!["E501".into()]))
        );
        assert_eq!(parse_comment("# this is not a noqanything"), None);
        assert_eq!(parse_comment("# see noqa docs"), None);
    }
}
