//! Compiled lookups over the knowledge base tables.

use super::{collapse_whitespace, AssertSite, FollowOn, Message, OpSignature};
use aho_corasick::AhoCorasick;
use regex::Regex;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::OnceLock;

/// A regex compiled the first time it is needed: most runs need a handful of the
/// knowledge base's patterns, and compiling them all would dominate start-up.
pub struct LazyRegex {
    pattern: String,
    compiled: OnceLock<Regex>,
}

impl LazyRegex {
    fn new(pattern: &str) -> LazyRegex {
        LazyRegex { pattern: pattern.to_string(), compiled: OnceLock::new() }
    }

    /// The compiled regex. Every pattern of the embedded knowledge base compiles (a test
    /// checks them all with [`Matchers::check_patterns`]).
    pub fn get(&self) -> &Regex {
        self.compiled
            .get_or_init(|| Regex::new(&self.pattern).expect("knowledge-base patterns are checked by tests"))
    }
}

pub struct Matchers {
    /// Collapsed condition text -> indices into `asserts`.
    by_condition: HashMap<String, Vec<usize>>,
    /// Sites whose condition is a pattern (generated kernels).
    by_regex: Vec<(usize, LazyRegex)>,
    /// Each message's literal: a message's regex runs only on text that contains it.
    message_literals: AhoCorasick,
    message_regexes: Vec<LazyRegex>,
    /// The same, for text typed again in another case (compiled on first use).
    message_literals_any_case: OnceLock<AhoCorasick>,
    message_regexes_any_case: Vec<LazyRegex>,
    op_calls: Vec<Vec<LazyRegex>>,
}

/// An assertion resolved to a knowledge-base site.
#[derive(Debug)]
pub struct AssertMatch<'kb> {
    pub site: &'kb AssertSite,
    /// Values the condition itself reveals (named groups of `condition_regex`).
    pub values: Map<String, Value>,
    /// True when the kernel name or file confirmed the site, not the condition alone.
    pub confirmed: bool,
}

/// A host-side message resolved to a knowledge-base entry.
#[derive(Debug)]
pub struct MessageMatch<'kb> {
    pub message: &'kb Message,
    pub values: Map<String, Value>,
    /// The op named by the message itself (a group named `op`).
    pub op: Option<String>,
}

impl Matchers {
    pub fn build(
        asserts: &[AssertSite],
        messages: &[Message],
        _followons: &[FollowOn],
        ops: &[OpSignature],
    ) -> anyhow::Result<Matchers> {
        let mut by_condition: HashMap<String, Vec<usize>> = HashMap::new();
        let mut by_regex = Vec::new();
        for (i, site) in asserts.iter().enumerate() {
            if let Some(pattern) = &site.condition_regex {
                by_regex.push((i, LazyRegex::new(pattern)));
            } else {
                by_condition.entry(condition_key(&site.condition)).or_default().push(i);
            }
        }
        let message_regexes = messages.iter().map(|m| LazyRegex::new(&m.pattern)).collect();
        let message_regexes_any_case =
            messages.iter().map(|m| LazyRegex::new(&format!("(?i){}", m.pattern))).collect();
        let message_literals = AhoCorasick::new(messages.iter().map(|m| m.literal.as_str()))?;
        let op_calls = ops.iter().map(|op| op.calls.iter().map(|c| LazyRegex::new(c)).collect()).collect();
        Ok(Matchers {
            by_condition,
            by_regex,
            message_literals,
            message_regexes,
            message_literals_any_case: OnceLock::new(),
            message_regexes_any_case,
            op_calls,
        })
    }

    /// Compiles every pattern, naming the first that does not compile.
    pub fn check_patterns(&self) -> anyhow::Result<()> {
        let all = self
            .by_regex
            .iter()
            .map(|(_, r)| r)
            .chain(&self.message_regexes)
            .chain(self.op_calls.iter().flatten());
        for lazy in all.chain(&self.message_regexes_any_case) {
            Regex::new(&lazy.pattern).map_err(|e| anyhow::anyhow!("pattern {:?}: {e}", lazy.pattern))?;
        }
        Ok(())
    }

    pub fn match_assert<'kb>(
        &self,
        asserts: &'kb [AssertSite],
        file: &str,
        kernel: &str,
        condition: &str,
        message: Option<&str>,
    ) -> Option<AssertMatch<'kb>> {
        let condition = collapse_whitespace(condition);
        let kernel = kernel_name(kernel);
        let file = basename(file);
        if let Some(candidates) = self.by_condition.get(&condition_key(&condition)) {
            // Several sites share a condition; the kernel name and file tell them apart.
            let score = |site: &AssertSite| {
                let kernel_hit = !site.kernel.is_empty() && site.kernel == kernel;
                let file_hit = !site.file.is_empty()
                    && super::catalogue::file_stem(&site.file) == super::catalogue::file_stem(file);
                let message_hit = site
                    .message_contains
                    .as_deref()
                    .is_some_and(|needle| message.is_some_and(|m| m.contains(needle)));
                (message_hit as u8) * 4 + (kernel_hit as u8) * 2 + file_hit as u8
            };
            let best =
                candidates.iter().copied().max_by_key(|&i| (score(&asserts[i]), std::cmp::Reverse(i)))?;
            let site = &asserts[best];
            // A bare `false` or a generic text says nothing without its kernel or file.
            let confirmed = score(site) > 0;
            if !confirmed && is_generic_condition(&condition) {
                return None;
            }
            return Some(AssertMatch { site, values: Map::new(), confirmed });
        }
        for (i, lazy) in &self.by_regex {
            let re = lazy.get();
            if let Some(caps) = re.captures(&condition) {
                return Some(AssertMatch {
                    site: &asserts[*i],
                    values: capture_values(re, &caps),
                    confirmed: true,
                });
            }
        }
        self.match_interleaved(asserts, &condition)
    }

    /// A condition with other text run into its end: GPU threads printing over each other
    /// (`… && "index out of bounds",0/pytorch/aten/…`). The longest known condition the
    /// text begins with, ending where a word ends; unconfirmed.
    fn match_interleaved<'kb>(
        &self,
        asserts: &'kb [AssertSite],
        condition: &str,
    ) -> Option<AssertMatch<'kb>> {
        const SHORTEST_PREFIX: usize = 12;
        let key = condition_key(condition);
        let (_, sites) = self
            .by_condition
            .iter()
            .filter(|(known, _)| {
                known.len() >= SHORTEST_PREFIX
                    && key.len() > known.len()
                    && key.starts_with(known.as_str())
                    && !key[known.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
            })
            .max_by_key(|(known, _)| known.len())?;
        let site = &asserts[*sites.first()?];
        (!is_generic_condition(&site.condition)).then(|| AssertMatch {
            site,
            values: Map::new(),
            confirmed: false,
        })
    }

    pub fn match_message<'kb>(&self, messages: &'kb [Message], text: &str) -> Option<MessageMatch<'kb>> {
        Self::first_match(messages, &self.message_literals, &self.message_regexes, text)
    }

    /// A message typed again by hand: in any case, with runs of blanks for one.
    pub fn match_message_any_case<'kb>(
        &self,
        messages: &'kb [Message],
        text: &str,
    ) -> Option<MessageMatch<'kb>> {
        let literals = self.message_literals_any_case.get_or_init(|| {
            AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(messages.iter().map(|m| m.literal.as_str()))
                .expect("the same literals built the exact automaton")
        });
        let collapsed = collapse_whitespace(text);
        Self::first_match(messages, literals, &self.message_regexes_any_case, &collapsed)
    }

    fn first_match<'kb>(
        messages: &'kb [Message],
        literals: &AhoCorasick,
        regexes: &[LazyRegex],
        text: &str,
    ) -> Option<MessageMatch<'kb>> {
        let mut candidates: Vec<usize> =
            literals.find_overlapping_iter(text).map(|m| m.pattern().as_usize()).collect();
        if candidates.is_empty() {
            return None;
        }
        // The first entry of the file that matches wins.
        candidates.sort_unstable();
        candidates.dedup();
        candidates.into_iter().find_map(|i| {
            let re = regexes[i].get();
            let caps = re.captures(text)?;
            let mut values = capture_values(re, &caps);
            let op = values.remove("op").and_then(|v| v.as_str().map(str::to_string));
            Some(MessageMatch { message: &messages[i], values, op })
        })
    }

    pub fn op_of_frame<'kb>(
        &self,
        ops: &'kb [OpSignature],
        function: Option<&str>,
        code: Option<&str>,
        is_torch: bool,
    ) -> Option<&'kb OpSignature> {
        if is_torch {
            if let Some(function) = function {
                let bare = function.rsplit('.').next().unwrap_or(function);
                if let Some(op) = ops.iter().find(|o| o.functions.iter().any(|f| f == bare)) {
                    return Some(op);
                }
            }
        }
        let code = code?;
        ops.iter()
            .zip(&self.op_calls)
            .find(|(_, calls)| calls.iter().any(|re| re.get().is_match(code)))
            .map(|(op, _)| op)
    }
}

/// A condition as looked up: without blanks and case, so that a condition typed from a
/// screenshot (`t>=0 && t<n_classes`, `T >= 0`) is the one printed.
fn condition_key(condition: &str) -> String {
    condition.chars().filter(|c| !c.is_whitespace()).flat_map(char::to_lowercase).collect()
}

/// Named groups of a match as JSON values: integers where the text is one.
/// A trailing `_2`, `_3`, ... is dropped (group names must be unique in one regex).
pub fn capture_values(re: &Regex, caps: &regex::Captures<'_>) -> Map<String, Value> {
    let mut values = Map::new();
    for name in re.capture_names().flatten() {
        if let Some(m) = caps.name(name) {
            let key = match name.rsplit_once('_') {
                Some((stem, n)) if n.chars().all(|c| c.is_ascii_digit()) && !stem.is_empty() => stem,
                _ => name,
            };
            values.insert(key.to_string(), number_or_string(m.as_str()));
        }
    }
    values
}

pub fn number_or_string(s: &str) -> Value {
    s.parse::<i64>().map(Value::from).unwrap_or_else(|_| Value::from(s))
}

/// The bare function name from an assertion's function field, which old CUDA toolkits
/// print as a full templated signature: `void name<T>(args) [with T = float]`.
pub fn kernel_name(kernel: &str) -> &str {
    let k = kernel.trim();
    let k = k.strip_prefix("void ").unwrap_or(k);
    let k = k.strip_prefix("__global__ ").unwrap_or(k);
    let end = k.find(['<', '(', ' ']).unwrap_or(k.len());
    let name = &k[..end];
    // `operator()` keeps its parentheses.
    if name == "operator" {
        "operator()"
    } else {
        name.rsplit("::").next().unwrap_or(name)
    }
}

/// File name of a path written with either separator.
pub fn basename(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

fn is_generic_condition(condition: &str) -> bool {
    matches!(condition, "false" | "cond && message" | "index >= 0")
}
