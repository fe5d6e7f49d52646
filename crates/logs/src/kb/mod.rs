//! The knowledge base: causes, kernel assertions, host-side messages, follow-on errors
//! and op signatures, written once as TOML (`kb/*.toml`) and embedded in the binary.
//! The Python package ships the same files.

mod catalogue;
mod matcher;
mod tolerant;

pub use catalogue::{file_stem, KernelFile};
pub use matcher::{basename, kernel_name, AssertMatch, MessageMatch};

use serde::Deserialize;
use std::collections::HashMap;
use std::sync::OnceLock;

/// The TOML sources, embedded at build time. `kb/` at the repository root links here.
pub const SOURCES: [(&str, &str); 7] = [
    ("causes.toml", include_str!("../../../../python/assertscope/kb/causes.toml")),
    ("asserts.toml", include_str!("../../../../python/assertscope/kb/asserts.toml")),
    ("messages.toml", include_str!("../../../../python/assertscope/kb/messages.toml")),
    ("followons.toml", include_str!("../../../../python/assertscope/kb/followons.toml")),
    ("ops.toml", include_str!("../../../../python/assertscope/kb/ops.toml")),
    ("hints.toml", include_str!("../../../../python/assertscope/kb/hints.toml")),
    ("value-checks.toml", include_str!("../../../../python/assertscope/kb/value-checks.toml")),
];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cause {
    pub id: String,
    pub title: String,
    pub checklist_step: u8,
    pub explanation: String,
    /// Where such values usually come from: said when the report has not found which one it
    /// is (no specific fix fired), and on the cause's page.
    #[serde(default)]
    pub sources: String,
    pub fix: String,
    pub example: String,
}

impl Cause {
    pub fn checklist_step(&self) -> Option<u8> {
        (self.checklist_step > 0).then_some(self.checklist_step)
    }

    /// The explanation with `{value}` (the bad value, as PyTorch's error quotes it) filled
    /// in: this failure's value as a person reads it, or `N` when it is not known. The
    /// Python package's `kb.explanation` fills it alike.
    pub fn explanation_with(&self, value: Option<&str>) -> String {
        self.explanation.replace("{value}", value.unwrap_or("N"))
    }

    /// The explanation followed by the usual sources, for a report that has not found which
    /// source it is, and for the cause's page. `kb.explanation(…, sources=True)` in Python.
    pub fn explanation_and_sources(&self, value: Option<&str>) -> String {
        let explained = self.explanation_with(value);
        match self.sources.trim() {
            "" => explained,
            sources => format!("{} Typical sources: {sources}", explained.trim_end()),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssertSite {
    pub id: String,
    pub file: String,
    pub kernel: String,
    pub condition: String,
    #[serde(default)]
    pub condition_regex: Option<String>,
    pub op: String,
    pub cause: String,
    pub ops: Vec<String>,
    #[serde(default)]
    pub internal: bool,
    #[serde(default)]
    pub cpu_message: Option<String>,
    #[serde(default)]
    pub message_contains: Option<String>,
    pub hint: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Message {
    pub id: String,
    pub literal: String,
    pub pattern: String,
    pub cause: String,
    #[serde(default)]
    pub op: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub hint: Option<String>,
    pub example: String,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    StickyAssert,
    Trailer,
    Cascade,
    Peer,
    Teardown,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FollowOn {
    pub id: String,
    pub literal: String,
    pub role: Role,
    #[serde(default)]
    pub alone: Option<String>,
    pub meaning: String,
    pub example: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpSignature {
    pub name: String,
    pub functions: Vec<String>,
    pub calls: Vec<String>,
    #[serde(default)]
    pub bad_values: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hint {
    pub id: String,
    pub cause: String,
    pub text: String,
}

impl Hint {
    /// The text with `{name}` placeholders filled from `values`: strings as they are, other
    /// values as compact JSON. None if a placeholder has no value or a brace is never
    /// closed. The Python package's `kb.render` follows the same rules.
    pub fn render(&self, values: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
        let mut out = String::with_capacity(self.text.len());
        let mut rest = self.text.as_str();
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let close = rest[open..].find('}')? + open;
            let value = values.get(&rest[open + 1..close])?;
            match value {
                serde_json::Value::String(s) => out.push_str(s),
                other => out.push_str(&other.to_string()),
            }
            rest = &rest[close + 1..];
        }
        out.push_str(rest);
        Some(out)
    }
}

/// A check PyTorch's kernels make on tensor values (value-checks.toml, generated from
/// PyTorch's source by tests/kb_value_checks.rs).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValueCheck {
    pub id: String,
    pub op: String,
    pub ops: Vec<String>,
    pub cause: String,
    #[serde(rename = "macro")]
    pub macro_name: String,
    pub device: String,
    /// The message, `{}` for each value the check inserts.
    pub template: String,
    pub condition: String,
    pub kernels: Vec<String>,
    pub families: Vec<String>,
}

#[derive(Deserialize)]
struct ValueCheckFile {
    check: Vec<ValueCheck>,
}

#[derive(Deserialize)]
struct HintFile {
    hint: Vec<Hint>,
}

/// A step of the manual checklist (causes.toml).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub number: u8,
    pub text: String,
}

#[derive(Deserialize)]
struct CauseFile {
    step: Vec<Step>,
    cause: Vec<Cause>,
}
#[derive(Deserialize)]
struct AssertFile {
    #[serde(rename = "assert")]
    asserts: Vec<AssertSite>,
}
#[derive(Deserialize)]
struct MessageFile {
    message: Vec<Message>,
}
#[derive(Deserialize)]
struct FollowOnFile {
    followon: Vec<FollowOn>,
}
#[derive(Deserialize)]
struct OpFile {
    op: Vec<OpSignature>,
}

pub struct KnowledgeBase {
    pub steps: Vec<Step>,
    pub causes: Vec<Cause>,
    pub asserts: Vec<AssertSite>,
    pub messages: Vec<Message>,
    pub followons: Vec<FollowOn>,
    pub ops: Vec<OpSignature>,
    pub hints: Vec<Hint>,
    pub value_checks: Vec<ValueCheck>,
    cause_index: HashMap<String, usize>,
    kernel_files: HashMap<String, KernelFile>,
    matchers: matcher::Matchers,
    tolerant_messages: tolerant::Examples,
    tolerant_followons: tolerant::Examples,
}

impl KnowledgeBase {
    /// The embedded knowledge base, parsed and checked once per process.
    pub fn get() -> &'static KnowledgeBase {
        static KB: OnceLock<KnowledgeBase> = OnceLock::new();
        KB.get_or_init(|| {
            KnowledgeBase::parse(&SOURCES)
                .unwrap_or_else(|e| panic!("embedded knowledge base is invalid: {e:#}"))
        })
    }

    /// Parses and cross-checks a knowledge base from (file name, TOML text) pairs.
    pub fn parse(sources: &[(&str, &str)]) -> anyhow::Result<KnowledgeBase> {
        let text = |name: &str| -> anyhow::Result<&str> {
            sources
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, t)| *t)
                .ok_or_else(|| anyhow::anyhow!("knowledge base file {name} is missing"))
        };
        let parse_err = |name: &'static str| move |e: toml::de::Error| anyhow::anyhow!("{name}: {e}");
        let CauseFile { step: steps, cause: causes } =
            toml::from_str::<CauseFile>(text("causes.toml")?).map_err(parse_err("causes.toml"))?;
        for c in &causes {
            anyhow::ensure!(
                c.checklist_step == 0 || steps.iter().any(|s| s.number == c.checklist_step),
                "causes.toml: {} names checklist step {} that does not exist",
                c.id,
                c.checklist_step
            );
        }
        let asserts =
            toml::from_str::<AssertFile>(text("asserts.toml")?).map_err(parse_err("asserts.toml"))?.asserts;
        let messages = toml::from_str::<MessageFile>(text("messages.toml")?)
            .map_err(parse_err("messages.toml"))?
            .message;
        let followons = toml::from_str::<FollowOnFile>(text("followons.toml")?)
            .map_err(parse_err("followons.toml"))?
            .followon;
        let ops = toml::from_str::<OpFile>(text("ops.toml")?).map_err(parse_err("ops.toml"))?.op;
        let hints = toml::from_str::<HintFile>(text("hints.toml")?).map_err(parse_err("hints.toml"))?.hint;
        let value_checks = toml::from_str::<ValueCheckFile>(text("value-checks.toml")?)
            .map_err(parse_err("value-checks.toml"))?
            .check;

        let cause_index: HashMap<String, usize> =
            causes.iter().enumerate().map(|(i, c)| (c.id.clone(), i)).collect();
        check_cause_references(&cause_index, &asserts, &messages, &followons, &ops, &hints, &value_checks)?;
        let messages = catalogue::with_value_checks(messages, &value_checks);
        let kernel_files = catalogue::kernel_files(&asserts, &value_checks);
        let matchers = matcher::Matchers::build(&asserts, &messages, &followons, &ops)?;
        let tolerant_messages =
            tolerant::Examples::new(messages.iter().map(|m| (m.literal.as_str(), m.example.as_str())));
        let tolerant_followons =
            tolerant::Examples::new(followons.iter().map(|f| (f.literal.as_str(), f.example.as_str())));
        Ok(KnowledgeBase {
            steps,
            causes,
            asserts,
            messages,
            followons,
            ops,
            hints,
            value_checks,
            cause_index,
            kernel_files,
            matchers,
            tolerant_messages,
            tolerant_followons,
        })
    }

    /// Compiles every regex of the knowledge base (they compile lazily in normal use).
    pub fn check_patterns(&self) -> anyhow::Result<()> {
        self.matchers.check_patterns()
    }

    pub fn cause(&self, id: &str) -> Option<&Cause> {
        self.cause_index.get(id).map(|&i| &self.causes[i])
    }

    /// The cause with this id; the ids used by the code are all in the embedded KB
    /// (a test checks it), so a miss is a programming error.
    pub fn expect_cause(&self, id: &str) -> &Cause {
        self.cause(id).unwrap_or_else(|| panic!("cause {id:?} is not in the knowledge base"))
    }

    pub fn step(&self, number: u8) -> Option<&Step> {
        self.steps.iter().find(|s| s.number == number)
    }

    pub fn hint(&self, id: &str) -> Option<&Hint> {
        self.hints.iter().find(|h| h.id == id)
    }

    pub fn op(&self, name: &str) -> Option<&OpSignature> {
        self.ops.iter().find(|o| o.name == name)
    }

    /// The site of an assertion; `message` is the explanatory text of the printf form.
    pub fn match_assert(
        &self,
        file: &str,
        kernel: &str,
        condition: &str,
        message: Option<&str>,
    ) -> Option<AssertMatch<'_>> {
        self.matchers.match_assert(&self.asserts, file, kernel, condition, message).or_else(|| {
            // A condition the knowledge base does not list (or none: a line whose assertion
            // text was translated away), in a kernel it knows by file and function.
            let name = kernel_name(kernel);
            let stem = file_stem(file);
            if let Some(stem) = stem.as_deref().filter(|_| !name.is_empty()) {
                let mut same_place = self.asserts.iter().filter(|s| {
                    !s.internal && s.kernel == name && file_stem(&s.file).as_deref() == Some(stem)
                });
                if let Some(first) = same_place.next() {
                    if same_place.all(|s| s.cause == first.cause) {
                        return Some(AssertMatch {
                            site: first,
                            values: serde_json::Map::new(),
                            confirmed: false,
                        });
                    }
                }
            }
            // Or by its function's own name: a lambda's `operator()` names no kernel.
            if let Some(site) = self
                .asserts
                .iter()
                .find(|s| !s.internal && !name.is_empty() && name != "operator()" && s.kernel == name)
            {
                return Some(AssertMatch { site, values: serde_json::Map::new(), confirmed: false });
            }
            // Or in a file whose checks all mean one thing (THC's and THCUNN's spellings).
            let stem = stem?;
            let known = self.kernel_files.get(&stem)?;
            known.only_cause()?;
            let site =
                self.asserts.iter().find(|s| !s.internal && file_stem(&s.file).as_deref() == Some(&stem))?;
            Some(AssertMatch { site, values: serde_json::Map::new(), confirmed: false })
        })
    }

    /// What a kernel source file (any path form) stands for, if its checks are known.
    pub fn kernel_file(&self, path: &str) -> Option<&KernelFile> {
        self.kernel_files.get(&file_stem(path)?)
    }

    /// The first known kernel file a text names (an `at FILE:LINE` suffix, `file=… line=`).
    pub fn kernel_file_named_in(&self, text: &str) -> Option<&KernelFile> {
        catalogue::named_files(text).into_iter().find_map(|stem| self.kernel_files.get(&stem))
    }

    pub fn match_message(&self, text: &str) -> Option<MessageMatch<'_>> {
        self.matchers.match_message(&self.messages, text)
    }

    /// A message as typed again by hand: any case, any run of blanks for a space.
    pub fn match_message_any_case(&self, text: &str) -> Option<MessageMatch<'_>> {
        self.matchers.match_message_any_case(&self.messages, text)
    }

    pub fn match_followon(&self, text: &str) -> Option<&FollowOn> {
        self.followons.iter().find(|f| text.contains(f.literal.as_str()))
    }

    /// The message a damaged text (cut off, glued, without its full stop) most likely
    /// is, when no message matches it exactly. Weaker evidence: no values come with it.
    pub fn match_message_tolerant(&self, text: &str) -> Option<&Message> {
        self.tolerant_messages.find(text).map(|i| &self.messages[i])
    }

    /// Whether a line holds a known message or follow-on error in another case, spacing
    /// or quoting than printed (a line worth keeping, to be classified tolerantly).
    pub fn mentions_known_text(&self, text: &str) -> bool {
        self.tolerant_messages.find_literal(text).is_some()
            || self.tolerant_followons.find_literal(text).is_some()
    }

    /// The follow-on error a damaged text most likely is.
    pub fn match_followon_tolerant(&self, text: &str) -> Option<&FollowOn> {
        self.tolerant_followons.find(text).map(|i| &self.followons[i])
    }

    /// The op a frame is in, from a torch function name (when `is_torch`) or a code line.
    pub fn op_of_frame(
        &self,
        function: Option<&str>,
        code: Option<&str>,
        is_torch: bool,
    ) -> Option<&OpSignature> {
        self.matchers.op_of_frame(&self.ops, function, code, is_torch)
    }

    /// Every fixed string whose presence makes a log line worth parsing.
    pub fn literals(&self) -> impl Iterator<Item = &str> {
        self.messages
            .iter()
            .map(|m| m.literal.as_str())
            .chain(self.followons.iter().map(|f| f.literal.as_str()))
    }
}

/// Every cause a record of the other files names exists in causes.toml.
fn check_cause_references(
    cause_index: &HashMap<String, usize>,
    asserts: &[AssertSite],
    messages: &[Message],
    followons: &[FollowOn],
    ops: &[OpSignature],
    hints: &[Hint],
    value_checks: &[ValueCheck],
) -> anyhow::Result<()> {
    let check_cause = |file: &str, id: &str, cause: &str| -> anyhow::Result<()> {
        anyhow::ensure!(cause_index.contains_key(cause), "{file}: {id} names unknown cause {cause:?}");
        Ok(())
    };
    for a in asserts {
        check_cause("asserts.toml", &a.id, &a.cause)?;
    }
    for m in messages {
        check_cause("messages.toml", &m.id, &m.cause)?;
    }
    for f in followons {
        if let Some(alone) = &f.alone {
            check_cause("followons.toml", &f.id, alone)?;
        }
    }
    for o in ops {
        if let Some(c) = &o.bad_values {
            check_cause("ops.toml", &o.name, c)?;
        }
    }
    for h in hints {
        check_cause("hints.toml", &h.id, &h.cause)?;
    }
    for v in value_checks {
        check_cause("value-checks.toml", &v.id, &v.cause)?;
    }
    Ok(())
}

/// Collapses runs of whitespace to one space, as the C preprocessor does when it
/// stringifies an assert condition.
pub fn collapse_whitespace(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}
