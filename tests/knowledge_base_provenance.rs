//! The knowledge base's message texts against the source that prints them
//! (tests/fixtures/kb_provenance/sources.toml): no hand-typed paraphrase. For every
//! recorded source, the template must be built by the recorded source text, piece by
//! piece; the recorded instance must be an instance of the template; and the knowledge
//! base's pattern for the message must match that instance. Every message of
//! kb/messages.toml is traced to a source or listed, with the reason, as not yet traced.
//! A source may also be a shared library of an installed wheel (the C strings the
//! compiled code prints): then its strings are looked up in the installed file itself.

mod check_support;
use check_support::{python, skip};

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Provenance {
    unverified: Vec<Unverified>,
    source: Vec<Source>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Unverified {
    id: String,
    reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Source {
    id: String,
    template: String,
    #[serde(default)]
    form: Form,
    instance: String,
    found: String,
    repo: String,
    path: String,
    #[serde(default)]
    commit: String,
    /// For a shared library: the version of the wheel it was read from.
    #[serde(default)]
    wheel: String,
    family: String,
    versions: String,
}

#[derive(Deserialize, Default, PartialEq)]
#[serde(rename_all = "kebab-case")]
enum Form {
    /// The template's pieces are in the source's string literals.
    #[default]
    Literal,
    /// The template's pieces are the source's code: a macro prints its condition (#cond).
    Condition,
    /// `found` holds C strings of a shared library in a wheel, one per line, as `strings`
    /// prints them; `repo` is `pypi:<distribution>`, `path` the file in site-packages.
    Library,
}

#[derive(Deserialize)]
struct Messages {
    message: Vec<Message>,
}

#[derive(Deserialize)]
struct Message {
    id: String,
    literal: String,
    pattern: String,
    example: String,
    cause: String,
}

const FAMILIES: [&str; 9] =
    ["th", "aten-1", "aten-2", "python", "mps", "inductor", "cpp-api", "hip", "cuda-runtime"];
const REPOS: [&str; 2] = ["pytorch/pytorch", "ROCm/clr"];
const WHEELS: [&str; 2] = ["pypi:torch", "pypi:nvidia-cuda-runtime"];

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

fn load() -> (Provenance, Messages) {
    let provenance = toml::from_str(&read("tests/fixtures/kb_provenance/sources.toml")).unwrap();
    let messages = toml::from_str(&read("kb/messages.toml")).unwrap();
    (provenance, messages)
}

/// The contents of the string and character literals of a piece of source, each followed
/// by NUL: what the code can print.
fn string_literals(source: &str) -> String {
    let mut out = String::new();
    let mut chars = source.chars();
    while let Some(c) = chars.next() {
        let quote = match c {
            '"' => '"',
            // A C character literal ('"') is printed like a one-character string.
            '\'' => '\'',
            _ => continue,
        };
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('n') => out.push('\n'),
                    Some(escaped) => out.push(escaped),
                    None => {}
                },
                c if c == quote => break,
                c => out.push(c),
            }
        }
        out.push('\u{0}');
    }
    out
}

/// What a source prints or tests, in the form its template pieces are looked up in.
fn haystack(s: &Source) -> String {
    match s.form {
        Form::Literal => {
            let literals = string_literals(&s.found);
            // Adjacent literals concatenate (C) or are joined by the call (c10::str).
            literals.split('\u{0}').collect()
        }
        Form::Condition => s.found.split_whitespace().collect::<Vec<_>>().join(" "),
        Form::Library => library_strings(s).concat(),
    }
}

fn library_strings(s: &Source) -> Vec<&str> {
    s.found.strip_prefix('\n').unwrap_or(&s.found).lines().collect()
}

fn is_full_hash(commit: &str) -> bool {
    commit.len() == 40 && commit.chars().all(|c| c.is_ascii_hexdigit())
}

fn template_regex(template: &str) -> regex::Regex {
    let pattern = template.split("{}").map(regex::escape).collect::<Vec<_>>().join(".+?");
    regex::Regex::new(&pattern).unwrap()
}

#[test]
fn every_source_records_where_it_was_read() {
    let (provenance, _) = load();
    for s in &provenance.source {
        if s.form == Form::Library {
            assert!(WHEELS.contains(&s.repo.as_str()), "{}: wheel {}", s.id, s.repo);
            assert!(!s.wheel.is_empty(), "{}: no wheel version", s.id);
            // torch records the commit it was built from (torch.version.git_version).
            assert!(s.commit.is_empty() || is_full_hash(&s.commit), "{}: commit {:?}", s.id, s.commit);
        } else {
            assert!(REPOS.contains(&s.repo.as_str()), "{}: repository {}", s.id, s.repo);
            assert!(is_full_hash(&s.commit), "{}: commit {:?} is not a full hash", s.id, s.commit);
        }
        assert!(!s.path.is_empty() && !s.path.starts_with('/'), "{}: path {:?}", s.id, s.path);
        assert!(FAMILIES.contains(&s.family.as_str()), "{}: family {:?}", s.id, s.family);
        assert!(!s.versions.trim().is_empty(), "{}: no versions", s.id);
        assert!(!s.found.trim().is_empty(), "{}: no source text", s.id);
    }
}

#[test]
fn every_template_is_built_by_its_source_text() {
    let (provenance, _) = load();
    let mut failures = Vec::new();
    for s in &provenance.source {
        let text = haystack(s);
        let mut at = 0;
        for piece in s.template.split("{}").filter(|p| !p.is_empty()) {
            match text[at..].find(piece) {
                Some(found) => at += found + piece.len(),
                None => {
                    failures.push(format!(
                        "{} ({}): {piece:?} is not in the source text after byte {at}",
                        s.id, s.path
                    ));
                    break;
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_instance_fits_its_template_and_the_knowledge_base_pattern() {
    let (provenance, messages) = load();
    let mut failures = Vec::new();
    for s in &provenance.source {
        let Some(message) = messages.message.iter().find(|m| m.id == s.id) else {
            failures.push(format!("{}: no such message in kb/messages.toml", s.id));
            continue;
        };
        if !template_regex(&s.template).is_match(&s.instance) {
            failures.push(format!("{}: {:?} is not an instance of {:?}", s.id, s.instance, s.template));
        }
        if !regex::Regex::new(&message.pattern).unwrap().is_match(&s.instance) {
            failures.push(format!(
                "{}: the knowledge base's pattern {:?} does not match {:?}, which {} prints",
                s.id, message.pattern, s.instance, s.path
            ));
        }
        if !s.instance.contains(&message.literal) {
            failures.push(format!("{}: {:?} lacks the literal {:?}", s.id, s.instance, message.literal));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_message_is_traced_or_listed_with_a_reason() {
    let (provenance, messages) = load();
    for m in &messages.message {
        let traced = provenance.source.iter().any(|s| s.id == m.id);
        let listed = provenance.unverified.iter().filter(|u| u.id == m.id).count();
        assert!(
            traced as usize + listed == 1,
            "{}: traced to a source: {traced}, listed as not traced: {listed} times",
            m.id
        );
        // The example a message documents must be what a traced source prints.
        if traced {
            let fits = provenance
                .source
                .iter()
                .filter(|s| s.id == m.id)
                .any(|s| template_regex(&s.template).is_match(&m.example));
            assert!(fits, "{}: the example {:?} fits none of its sources' templates", m.id, m.example);
        }
    }
    for u in &provenance.unverified {
        assert!(
            messages.message.iter().any(|m| m.id == u.id),
            "{}: listed, but not in the knowledge base",
            u.id
        );
        assert!(!u.reason.trim().is_empty(), "{}: listed without a reason", u.id);
    }
}

/// site-packages, and the installed version of each distribution (None if absent).
fn installed(distributions: &[&str]) -> Option<(std::path::PathBuf, Vec<Option<String>>)> {
    let script = "import importlib.metadata as m, sys, sysconfig\nprint(sysconfig.get_paths()['purelib'])\n\
                  for d in sys.argv[1:]:\n    try: print(m.version(d))\n    except m.PackageNotFoundError: print('-')";
    let out = std::process::Command::new(python()).arg("-c").arg(script).args(distributions).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let mut lines = text.lines();
    let site = lines.next()?.into();
    let versions = lines.map(|v| (v != "-").then(|| v.to_string())).collect();
    Some((site, versions))
}

/// Every string of a library source is a C string (its end, as linkers share the tails of
/// strings) of the file in the installed wheel of the version recorded. Skipped where that
/// wheel is not installed; under scripts/test, which installs the pinned versions, it must be.
#[test]
fn every_library_string_is_in_the_installed_wheel() {
    let (provenance, _) = load();
    let library: Vec<&Source> = provenance.source.iter().filter(|s| s.form == Form::Library).collect();
    let distributions: Vec<&str> = library.iter().map(|s| s.repo.trim_start_matches("pypi:")).collect();
    let Some((site, versions)) = installed(&distributions) else {
        return skip(&format!("{} could not list its packages", python().display()));
    };
    let mut failures = Vec::new();
    let mut checked = 0;
    for (s, version) in library.iter().zip(versions) {
        if version.as_deref() != Some(s.wheel.split('+').next().unwrap_or_default()) {
            skip(&format!("{}: {} {} is not installed (found {version:?})", s.id, s.repo, s.wheel));
            continue;
        }
        let path = site.join(&s.path);
        let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {}: {e}", s.id, path.display()));
        // SAFETY: a read-only map of an installed library that nothing here writes.
        let bytes = unsafe { memmap2::Mmap::map(&file) }.unwrap();
        for string in library_strings(s) {
            let terminated = [string.as_bytes(), b"\0"].concat();
            if memchr::memmem::find(&bytes, &terminated).is_none() {
                failures.push(format!("{}: {string:?} is not a string of {}", s.id, path.display()));
            }
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("{checked} of {} library sources checked against the installed wheels", library.len());
}

/// Counts for the record: texts traced per cause and per version family.
#[test]
fn report_counts() {
    let (provenance, messages) = load();
    let mut per_cause: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for m in &messages.message {
        let entry = per_cause.entry(m.cause.as_str()).or_default();
        entry.1 += 1;
        if provenance.source.iter().any(|s| s.id == m.id) {
            entry.0 += 1;
        }
    }
    let mut per_family: BTreeMap<&str, usize> = BTreeMap::new();
    for s in &provenance.source {
        *per_family.entry(s.family.as_str()).or_default() += 1;
    }
    let traced = messages.message.len() - provenance.unverified.len();
    println!("{traced} of {} messages traced, {} sources", messages.message.len(), provenance.source.len());
    for (cause, (traced, all)) in &per_cause {
        println!("cause {cause}: {traced}/{all}");
    }
    for (family, n) in &per_family {
        println!("family {family}: {n} sources");
    }
}
